/**
 * How a seal cuts a chat's unsealed inputs into batches and payload parts (functions/core/
 * dispatch/seal.ts planSeal): the limits DynamoDB sets (400 KB items, 100-item and 4 MB
 * transactions) and the contract's "all of them in one batch" (§4.4.3) meet here. Inputs
 * without media need no table read, so this runs without DynamoDB.
 */
import { describe, expect, it } from '@jest/globals';
import { BATCH_MAX_INPUTS } from '../../functions/core/dispatch/limits.js';
import { planSeal } from '../../functions/core/dispatch/seal.js';
import type { DispatchInput } from '../../functions/store/dispatch/inputs.js';
import { Keys } from '../../functions/store/keys.js';
import { sealWrites } from '../../functions/store/dispatch/seal.js';

// sealWrites names the table in each write; nothing here talks to it.
process.env.TABLE_NAME ??= 'unit-test-table';

let ids = 0;
const deps = {
  clock: () => new Date('2026-11-23T12:00:00.000Z'),
  newId: () => `batch${String(ids++).padStart(16, '0')}`,
  sleep: async () => undefined,
};

function inputs(count: number, content: (i: number) => string = (i) => `message ${i}`): DispatchInput[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `input${String(i).padStart(16, '0')}`,
    chat_id: 'chat0000000000000000a',
    source_kind: 'user_message' as const,
    source_id: `msg${String(i).padStart(18, '0')}`,
    sender_id: 'user:primary',
    content: content(i),
    media_ids: [],
    state: 'pending' as const,
    created_at: new Date(Date.parse('2026-11-23T11:00:00.000Z') + i).toISOString(),
  }));
}

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

describe('planSeal', () => {
  it('takes every input into one batch in batched_sequential mode, in order', async () => {
    const all = inputs(300);
    const plan = await planSeal('chat0000000000000000a', 'batched_sequential', all, 4, deps);
    expect(plan.taken).toEqual(all);
    expect(plan.batches).toHaveLength(1);
    const [batch] = plan.batches;
    expect(batch!.header).toMatchObject({
      chat_seq: 5,
      item_count: 300,
      part_count: 1,
      status: 'pending',
      attempt_count: 0,
      kind: 'user_batch',
    });
    expect(batch!.group).toBe('chat0000000000000000a');
    expect(batch!.parts[0]!.items.map((i) => i.sourceId)).toEqual(all.map((i) => i.source_id));
  });

  it(`stops at ${BATCH_MAX_INPUTS} inputs, so the list of taken inputs fits the dispatch state item`, async () => {
    const all = inputs(BATCH_MAX_INPUTS + 1);
    const plan = await planSeal('chat0000000000000000a', 'batched_sequential', all, 0, deps);
    expect(plan.taken).toHaveLength(BATCH_MAX_INPUTS);
    const sks = plan.taken.map((i) => Keys.dispatchInput(i.chat_id, i.created_at, i.id).sk);
    const stale = new Error('stale');
    const writes = sealWrites(
      'chat0000000000000000a',
      plan.batches,
      sks,
      { ver: 3 },
      {},
      deps.clock().toISOString(),
      () => stale,
    );
    const last = writes.at(-1)!;
    // Every item of a seal answers a failed condition the same way: read the chat's state again.
    expect('onConditionFailed' in last && last.onConditionFailed(undefined)).toBe(stale);
    const state = ('item' in last ? last.item : last).Update!;
    expect(state.Key).toEqual(Keys.dispatchState('chat0000000000000000a'));
    expect(bytes([...(state.ExpressionAttributeValues![':sks'] as Set<string>)])).toBeLessThan(300_000);
  });

  it(
    'splits a payload over 400 KB into parts that each fit an item, and a payload over 3 MB into consecutive ' +
      'batches',
    async () => {
      const big = inputs(12, (i) => String.fromCharCode(97 + i).repeat(290_000));
      const plan = await planSeal('chat0000000000000000a', 'batched_sequential', big, 0, deps);
      // About 290 KB each: ten fit the 3 MB batch, the eleventh waits for the next seal.
      expect(plan.taken).toHaveLength(10);
      const [batch] = plan.batches;
      expect(batch!.header.part_count).toBe(10);
      expect(batch!.header.payload_bytes).toBeGreaterThan(2_900_000);
      for (const part of batch!.parts) expect(bytes(part)).toBeLessThan(390_000);
      expect(batch!.parts.flatMap((p) => p.items.map((i) => i.content[0]))).toEqual('abcdefghij'.split(''));
    },
  );

  it('keeps small items together in one part', async () => {
    const plan = await planSeal(
      'chat0000000000000000a',
      'batched_sequential',
      inputs(3, (i) => 'x'.repeat(100_000 + i)),
      0,
      deps,
    );
    expect(plan.batches[0]!.parts.map((p) => p.items.length)).toEqual([3]);
  });

  it('makes one batch per input in the other modes, as many as one transaction holds', async () => {
    const all = inputs(40);
    const sequential = await planSeal('chat0000000000000000a', 'sequential', all, 0, deps);
    // Each batch is three items (header, part, reference) besides the dispatch state's update.
    expect(sequential.batches).toHaveLength(29);
    expect(sequential.taken).toEqual(all.slice(0, 29));
    expect(sequential.batches.map((b) => b.header.chat_seq)).toEqual(Array.from({ length: 29 }, (_, i) => i + 1));
    expect(new Set(sequential.batches.map((b) => b.group))).toEqual(new Set(['chat0000000000000000a']));
    expect(
      sealWrites(
        'chat0000000000000000a',
        sequential.batches,
        [],
        {},
        {},
        deps.clock().toISOString(),
        () => new Error('stale'),
      ).length,
    ).toBeLessThanOrEqual(100);
    const immediate = await planSeal('chat0000000000000000a', 'immediate', all.slice(0, 3), 0, deps);
    // In immediate mode each batch is its own FIFO group, so batches of one chat run concurrently.
    expect(immediate.batches.map((b) => b.group)).toEqual(immediate.batches.map((b) => b.header.id));
  });
});
