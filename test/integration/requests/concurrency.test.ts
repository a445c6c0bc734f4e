/**
 * Concurrent request operations (contract §3.2, §3.5, §4.3): the chat's pending count stays
 * equal to the number of pending requests under a mix of concurrent creates, resolves and
 * cancels, and of two racing resolutions exactly one wins, with one event and one dispatch input.
 */
import { describe, expect, it } from '@jest/globals';
import { eventsSince } from '../../support/events.js';
import { retryingBusy } from '../../support/retry.js';
import { choiceBody, requestsApi, ruleError, textBody } from './support.js';

const { api, h } = requestsApi();

describe('concurrent request operations on one chat', () => {
  it(
    '50 mixed creates, resolves and cancels leave pending_requests_count equal to the pending list, and ' +
      'pending-summary agrees',
    async () => {
      const chat = await h.newChat();
      const existing: any[] = [];
      for (let i = 0; i < 30; i++)
        existing.push(await h.create(chat.id, i % 2 ? textBody({ title: `e${i}` }) : choiceBody({ title: `e${i}` })));
      const resolveBody = (r: any) =>
        r.type === 'choice' ? { selectedOptionIds: ['yes'] } : { text: `answer ${r.title}` };
      const events = await h.eventCount();

      type Op = { kind: 'create' | 'resolve' | 'cancel'; request?: any; contested?: boolean };
      const ops: Op[] = [];
      for (let i = 0; i < 20; i++) ops.push({ kind: 'create' });
      for (const r of existing.slice(0, 10)) ops.push({ kind: 'resolve', request: r });
      for (const r of existing.slice(10, 20)) ops.push({ kind: 'cancel', request: r });
      // Five requests are resolved and cancelled at once: exactly one of the two may win.
      for (const r of existing.slice(20, 25))
        ops.push({ kind: 'resolve', request: r, contested: true }, { kind: 'cancel', request: r, contested: true });
      expect(ops).toHaveLength(50);
      // Interleave the kinds rather than sending them grouped.
      const shuffled = ops
        .map((op, i) => ({ op, k: (i * 37) % 50 }))
        .sort((a, b) => a.k - b.k)
        .map((x) => x.op);

      // A write the others keep moving the chat under may answer 429 (it changed nothing: README
      // "Busy chats"), likelier with a deployment's concurrent environments; the client retries it.
      const results = await Promise.all(
        shuffled.map(async (op, i) => {
          const { res } = await retryingBusy(() =>
            op.kind === 'create'
              ? h.post(chat.id, textBody({ title: `new ${i}` }))
              : op.kind === 'resolve'
                ? h.resolve(op.request.id, resolveBody(op.request))
                : h.cancel(op.request.id),
          );
          return { op, res };
        }),
      );

      // Every uncontested operation succeeds.
      for (const { op, res } of results.filter((r) => !r.op.contested)) {
        expect([op.kind, op.request?.title, res.status, res.body?.error]).toEqual([
          op.kind,
          op.request?.title,
          op.kind === 'create' ? 201 : 200,
          undefined,
        ]);
      }
      // Of each contested pair, exactly one wins; the loser is told the request's final status.
      let contestedResolved = 0;
      for (const r of existing.slice(20, 25)) {
        const pair = results.filter((x) => x.op.request?.id === r.id);
        expect(pair.map((x) => x.res.status).sort()).toEqual([200, 400]);
        const winner = pair.find((x) => x.res.status === 200)!;
        const loser = pair.find((x) => x.res.status === 400)!;
        const status = winner.op.kind === 'resolve' ? 'resolved' : 'cancelled';
        if (status === 'resolved') contestedResolved++;
        const verb = loser.op.kind === 'resolve' ? 'resolved' : 'cancelled';
        expect(loser.res.body.error).toEqual(
          ruleError(`Only pending requests can be ${verb}.`, { requestId: r.id, status }),
        );
        expect((await h.find(chat.id, r.id)).status).toBe(status);
      }

      const pending = await h.list(chat.id, 'pending');
      const chatAfter = await h.getChat(chat.id);
      expect(pending).toHaveLength(30 + 20 - 10 - 10 - 5);
      expect(chatAfter.pending_requests_count).toBe(pending.length);
      // This file's table holds only this chat's requests.
      expect(await h.pendingTotal()).toBe(pending.length);
      expect(await h.pendingTotal('?archived=false')).toBe(pending.length);
      expect((await h.list(chat.id, 'resolved')).length).toBe(10 + contestedResolved);
      expect((await h.list(chat.id, 'cancelled')).length).toBe(10 + 5 - contestedResolved);
      expect((await h.list(chat.id, 'all')).length).toBe(50);

      // One event per successful operation, and one dispatch input per resolution.
      const emitted = await eventsSince(api.tableName, events);
      const countOf = (type: string) => emitted.filter((e) => e.type === type).length;
      expect(emitted).toHaveLength(20 + 10 + 10 + 5);
      expect([countOf('request.created'), countOf('request.resolved'), countOf('request.cancelled')]).toEqual([
        20,
        10 + contestedResolved,
        10 + 5 - contestedResolved,
      ]);
      const inputs = await h.dispatchInputs(chat.id);
      expect(inputs).toHaveLength(10 + contestedResolved);
      expect(new Set(inputs.map((i) => i.source_id)).size).toBe(inputs.length);
      const seqs = emitted.map((e) => e.seq);
      expect(new Set(seqs).size).toBe(seqs.length);
    },
  );

  it('two concurrent resolves of one request: one 200, one 400, one request.resolved, one dispatch input', async () => {
    const chat = await h.newChat();
    const requests = [];
    for (let i = 0; i < 6; i++) requests.push(await h.create(chat.id, choiceBody({ title: `race ${i}` })));
    const events = await h.eventCount();
    const outcomes = await Promise.all(
      requests.map(async (r) => {
        const [a, b] = await Promise.all([
          h.resolve(r.id, { selectedOptionIds: ['yes'] }),
          h.resolve(r.id, { selectedOptionIds: ['no'], resolvedBy: 'backend' }),
        ]);
        return { r, a, b };
      }),
    );
    for (const { r, a, b } of outcomes) {
      expect([a.status, b.status].sort()).toEqual([200, 400]);
      const [winner, loser] = a.status === 200 ? [a, b] : [b, a];
      expect(loser.body.error).toEqual(
        ruleError('Only pending requests can be resolved.', { requestId: r.id, status: 'resolved' }),
      );
      // The stored request is the winner's.
      const stored = await h.find(chat.id, r.id);
      expect(stored).toEqual(winner.body);
      expect(stored.resolution_payload).toEqual(
        winner === a ? { selectedOptionIds: ['yes'] } : { selectedOptionIds: ['no'] },
      );
    }
    const emitted = await eventsSince(api.tableName, events);
    expect(emitted.map((e) => e.type)).toEqual(requests.map(() => 'request.resolved'));
    expect(new Set(emitted.map((e) => e.payload.requestId))).toEqual(new Set(requests.map((r) => r.id)));
    for (const e of emitted) {
      const winner = outcomes.find((o) => o.r.id === e.payload.requestId)!;
      const body = winner.a.status === 200 ? winner.a.body : winner.b.body;
      expect([e.payload.senderId, e.payload.resolution_payload]).toEqual([body.resolved_by, body.resolution_payload]);
    }
    const inputs = await h.dispatchInputs(chat.id);
    expect(inputs.map((i) => i.source_id).sort()).toEqual(requests.map((r) => r.id).sort());
    for (const input of inputs) {
      const o = outcomes.find((x) => x.r.id === input.source_id)!;
      const body = o.a.status === 200 ? o.a.body : o.b.body;
      expect(input.sender_id).toBe(body.resolved_by === 'backend' ? 'backend' : 'user:primary');
    }
    expect((await h.getChat(chat.id)).pending_requests_count).toBe(0);
  });
});
