/**
 * The local runtime's stream consumers (local/stream-tail.ts): a tail of the event log hands a
 * consumer's handler the records the table's stream would, under its mapping's settings
 * (lib/stream-mappings.ts, the stack's): shaped as Lambda shapes them with the item as stored,
 * only the records the mapping's filters let through, batches of its size, a partial batch
 * response retried from the first failed record, a failing record isolated by bisection and given
 * up after the mapping's retries, and the search writer's position kept across a restart. The
 * search writer is the real one (functions/jobs/search-index.ts, wrapped to record its records),
 * and the real effects handler's partial batch response is read as Lambda reads it.
 */
import { afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Context, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { oneAgentConfig, useApi } from '../../support/api.js';
import { eventually } from '../../support/wait.js';
import { indexed, messageIdsFor } from '../search/support.js';
import type * as StreamTail from '../../../local/stream-tail.js';
import type * as Mappings from '../../../lib/stream-mappings.js';
import type * as SearchIndexJob from '../../../functions/jobs/search-index.js';
import type * as SearchRepo from '../../../functions/store/search-repo.js';
import type * as EventsRepo from '../../../functions/store/events-repo.js';
import type * as Db from '../../../functions/store/db.js';
import type * as EventEffectsJob from '../../../functions/jobs/event-effects.js';
import type * as Delivery from '../../../local/rehearse/stream-delivery.js';
import type * as LambdaEvent from '../../../local/lambda-event.js';

// No tail of the runtime's own: the tails here are the writers.
const api = useApi({ config: oneAgentConfig });
let Tail: typeof StreamTail;
let mappings: typeof Mappings.tableStreamMappings;
let SearchJob: typeof SearchIndexJob;
let Search: typeof SearchRepo;
let Repo: typeof EventsRepo;
let ddb: typeof Db.ddb;
let EffectsJob: typeof EventEffectsJob;
let deliverBatch: typeof Delivery.deliverBatch;
let contextFor: typeof LambdaEvent.contextFor;
beforeAll(async () => {
  // Imported once the environment is set (the store reads the table name when first used).
  Tail = await import('../../../local/stream-tail.js');
  mappings = (await import('../../../lib/stream-mappings.js')).tableStreamMappings;
  SearchJob = await import('../../../functions/jobs/search-index.js');
  Search = await import('../../../functions/store/search-repo.js');
  Repo = await import('../../../functions/store/events-repo.js');
  ddb = (await import('../../../functions/store/db.js')).ddb;
  EffectsJob = await import('../../../functions/jobs/event-effects.js');
  deliverBatch = (await import('../../../local/rehearse/stream-delivery.js')).deliverBatch;
  contextFor = (await import('../../../local/lambda-event.js')).contextFor;
});

const running: { stop(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((t) => t.stop()));
  jest.restoreAllMocks();
});

type Invocation = { records: DynamoDBRecord[]; context: Context };
/** A handler that records each invocation, then answers as `answer` does. */
function recorder(answer: (event: DynamoDBStreamEvent, context: Context) => Promise<unknown> = async () => undefined) {
  const calls: Invocation[] = [];
  const handler = async (event: DynamoDBStreamEvent, context: Context) => {
    calls.push({ records: event.Records, context });
    return answer(event, context);
  };
  return { calls, handler };
}

const seqOf = (r: DynamoDBRecord) => Number(r.dynamodb!.NewImage!.seq!.N);
const typeOf = (r: DynamoDBRecord) => r.dynamodb!.NewImage!.eventType!.S;
const chat = async (title: string) =>
  (await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm', title })).body as { id: string };
const agentMessage = async (chatId: string, content: string) =>
  (await api.post(`/api/v1/chats/${chatId}/messages`, { role: 'agent', senderId: 'assistant', content })).body as {
    id: string;
  };
/** A checkpoint that starts the tail after `from` and keeps nothing. */
const startAfter = (from: number) => ({ load: async () => from, save: async () => undefined });

describe('local stream consumers', () => {
  it('hand the real search writer only the records its filter lets through, shaped as the stream carries them', async () => {
    const spy = recorder((event) => SearchJob.handler(event));
    const from = await Repo.currentSequence();
    running.push(
      Tail.startStreamTail({ mapping: mappings.searchIndex, handler: spy.handler, checkpoint: startAfter(from) }),
    );
    const c = await chat('stream records');
    const m = await agentMessage(c.id, 'the quokka smiles at the stream');
    // A streaming message: its message.created carries no final text, so the filter drops it.
    const streaming = await api.post(`/api/v1/chats/${c.id}/messages`, {
      role: 'agent',
      senderId: 'assistant',
      content: '',
      stream: true,
    });
    expect(streaming.status).toBe(201);

    await indexed(api, m.id, 'quokka');
    const records = spy.calls.flatMap((call) => call.records);
    // chat.created and the streaming message's event never reach the handler.
    expect(records.map(typeOf)).toEqual(['message.created']);
    const [record] = records as [DynamoDBRecord];
    expect(record.dynamodb!.NewImage!.payload!.M!.messageId).toEqual({ S: m.id });
    expect(record).toMatchObject({
      eventName: 'INSERT',
      eventSource: 'aws:dynamodb',
      eventVersion: '1.1',
      awsRegion: expect.any(String),
    });
    expect(record.eventSourceARN).toMatch(
      new RegExp(`^arn:aws:dynamodb:${record.awsRegion}:\\d{12}:table/${process.env.TABLE_NAME}/stream/.+$`),
    );
    expect(record.eventID).toMatch(/^[0-9a-f]{32}$/);
    const { Keys, NewImage, SequenceNumber, StreamViewType, ApproximateCreationDateTime } = record.dynamodb!;
    expect(StreamViewType).toBe('NEW_AND_OLD_IMAGES');
    expect(SequenceNumber).toMatch(/^[1-9]\d*$/);
    expect(Math.abs(ApproximateCreationDateTime! * 1000 - Date.now())).toBeLessThan(60_000);
    // The item exactly as stored (a low-level read: DynamoDB JSON), and its keys.
    const stored = await (ddb() as unknown as DynamoDBClient).send(
      new GetItemCommand({ TableName: process.env.TABLE_NAME, Key: Keys as never, ConsistentRead: true }),
    );
    expect(NewImage).toEqual(stored.Item);
    expect(Keys).toEqual({ pk: stored.Item!.pk, sk: stored.Item!.sk });
    expect(spy.calls[0]!.context.functionName).toBe('search-index');
    expect(spy.calls[0]!.context.getRemainingTimeInMillis()).toBeGreaterThan(0);
  });

  it('keeps the search writer where it got to across a restart, and indexes what came meanwhile', async () => {
    const c = await chat('restarts');
    const checkpoint = { load: Search.getTailPosition, save: Search.setTailPosition };
    const first = recorder((event) => SearchJob.handler(event));
    const tail = Tail.startStreamTail({ mapping: mappings.searchIndex, handler: first.handler, checkpoint });
    running.push(tail);
    const before = await agentMessage(c.id, 'a numbat before the restart');
    await indexed(api, before.id, 'numbat');
    await tail.stop();
    const kept = await Search.getTailPosition();
    expect(kept).toBeGreaterThanOrEqual(Math.max(...first.calls.flatMap((call) => call.records).map(seqOf)));

    const during = await agentMessage(c.id, 'a numbat while it was stopped');
    const second = recorder((event) => SearchJob.handler(event));
    running.push(Tail.startStreamTail({ mapping: mappings.searchIndex, handler: second.handler, checkpoint }));
    await indexed(api, during.id, 'numbat');
    // From the kept position on: nothing before it handed over again.
    expect(second.calls.flatMap((call) => call.records).every((r) => seqOf(r) > kept)).toBe(true);
    expect((await messageIdsFor(api, 'numbat')).sort()).toEqual([before.id, during.id].sort());
  });

  it('retries a partial batch failure from the first failed record, in batches of the mapping size', async () => {
    const from = await Repo.currentSequence();
    // Twelve events written before the tail starts: its first poll reads them all.
    for (let i = 0; i < 12; i++) await chat(`partial ${i}`);
    let failOnce = true;
    const spy = recorder(async (event) => {
      if (!failOnce) return { batchItemFailures: [] };
      failOnce = false;
      return { batchItemFailures: [{ itemIdentifier: event.Records[6]!.dynamodb!.SequenceNumber }] };
    });
    running.push(
      Tail.startStreamTail({
        mapping: mappings.eventEffects,
        handler: spy.handler,
        checkpoint: startAfter(from),
        timing: { retryDelayMs: 50 },
      }),
    );
    const head = await Repo.currentSequence();
    await eventually(
      () => spy.calls.flatMap((call) => call.records).map(seqOf),
      (seqs) => seqs.includes(head),
      { timeoutMs: 10_000, what: 'the last event handed over' },
    );
    const batches = spy.calls.map((call) => call.records.map(seqOf));
    const all = Array.from({ length: head - from }, (_, i) => from + 1 + i);
    expect(all).toHaveLength(12);
    // Ten, the same batch again from its seventh record, then the rest.
    expect(batches).toEqual([all.slice(0, 10), all.slice(6, 10), all.slice(10)]);
  });

  it('isolates a failing record by bisection and gives it up after the mapping retries', async () => {
    const errors = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    const from = await Repo.currentSequence();
    for (let i = 0; i < 5; i++) await chat(`poison ${i}`);
    const poison = from + 3;
    const spy = recorder(async (event) => {
      if (event.Records.some((r) => seqOf(r) === poison)) throw new Error('poison');
      return {};
    });
    const saved: number[] = [];
    running.push(
      Tail.startStreamTail({
        mapping: mappings.eventEffects,
        handler: spy.handler,
        checkpoint: { load: async () => from, save: async (through) => void saved.push(through) },
        timing: { retryDelayMs: 20 },
      }),
    );
    await eventually(
      () => saved,
      (s) => s.includes(from + 5),
      { timeoutMs: 10_000, what: 'the position past the poison record' },
    );
    const batches = spy.calls.map((call) => call.records.map(seqOf));
    const [a, b, c, d, e] = [1, 2, 3, 4, 5].map((i) => from + i) as [number, number, number, number, number];
    // Split in two (no retry spent), the failing half split again, then the record alone: tried
    // once and retried as often as the mapping says.
    const alone = Array.from({ length: 1 + mappings.eventEffects.retryAttempts }, () => [c]);
    expect(batches).toEqual([[a, b, c, d, e], [a, b, c], [a, b], ...alone, [d, e]]);
    expect(errors.mock.calls.map((call) => String(call[0])).filter((line) => line.includes('gave up'))).toEqual([
      expect.stringContaining(`events ${poison}`),
    ]);
  });

  it("reads the real effects handler's partial batch response: retried from the failed record, then given up", async () => {
    const from = await Repo.currentSequence();
    for (let i = 0; i < 3; i++) await chat(`effects ${i}`);
    const entries = await Repo.readLog(from + 1, 10);
    const [r1, r2, r3] = entries.map((e) => Tail.streamRecord(e as EventsRepo.LoggedEvent)) as [
      DynamoDBRecord,
      DynamoDBRecord,
      DynamoDBRecord,
    ];
    // A record whose image cannot be read: the handler fails it alone (Powertools' batch processor).
    const bad = { ...r2, dynamodb: { ...r2.dynamodb, NewImage: { ...r2.dynamodb!.NewImage, seq: { BOGUS: '1' } } } };
    const sequence = (records: DynamoDBRecord[]) => records.map((r) => r.dynamodb!.SequenceNumber!);
    const invoked: string[][] = [];
    const gaveUp: string[][] = [];
    const mapping = mappings.eventEffects;
    await deliverBatch([r1, bad as unknown as DynamoDBRecord, r3], {
      partial: mapping.reportBatchItemFailures,
      bisect: mapping.bisectBatchOnError,
      maxRetries: mapping.retryAttempts,
      maxAgeMs: Infinity,
      retryDelayMs: 10,
      signal: new AbortController().signal,
      invoke: async (event, requestId) => {
        invoked.push(sequence(event.Records));
        return EffectsJob.handler(event, contextFor('event-effects', requestId, 10_000));
      },
      giveUp: async (batch) => void gaveUp.push(sequence(batch)),
    });
    const [s1, s2, s3] = sequence([r1, r2, r3]);
    // Lambda retries from the first failed record (the records after it too), as often as the mapping says.
    const retried = Array.from({ length: mapping.retryAttempts }, () => [s2, s3]);
    expect(invoked).toEqual([[s1, s2, s3], ...retried]);
    expect(gaveUp).toEqual([[s2, s3]]);
  });
});
