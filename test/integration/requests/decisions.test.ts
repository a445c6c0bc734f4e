/**
 * The decision log (contract §5.5.6): one entry per closing (resolve, cancel, expiry) written with
 * it, never for a refused or replayed one; seq 1, 2, 3… without gaps over the instance, also under
 * concurrent closings; the hash chain recomputed here independently of the service's code, as an
 * outside script would; an edited entry breaks the chain; GET /decisions' `after`, `limit`, `next`.
 * The actors other than `open` are decisions-actors.test.ts's (they need the instance secret on).
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { ISO } from '../../support/shapes.js';
import { choiceBody, expectSchemaError, requestsApi, textBody } from './support.js';

const { api, h } = requestsApi();

async function all(): Promise<any[]> {
  const entries: any[] = [];
  let after = 0;
  for (;;) {
    const res = await api.get(`/api/v1/decisions?after=${after}&limit=7`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['data', 'next']);
    entries.push(...res.body.data);
    if (res.body.next === null) return entries;
    after = res.body.next;
  }
}

/** The canonical JSON of §5.5.6, written here from the contract's words, not the service's code. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );

/** The first seq whose chain link does not hold, or 0 when the whole log holds. */
function verify(entries: any[]): number {
  let prev = '0'.repeat(64);
  for (const [i, entry] of entries.entries()) {
    const { hash, ...rest } = entry;
    const expected = createHash('sha256')
      .update(Buffer.from(prev + canonical(rest), 'utf8'))
      .digest('hex');
    if (entry.seq !== i + 1 || entry.prev_hash !== prev || hash !== expected) return entry.seq;
    prev = hash;
  }
  return 0;
}

describe('the decision log (§5.5.6)', () => {
  it('appends one entry per closing, in the closing, with the request as it stood', async () => {
    const before = (await all()).length;
    const chat = await h.newChat();
    const resolved = await h.create(chat.id, choiceBody({ title: 'Ship it?' }));
    const cancelled = await h.create(chat.id, textBody({ title: 'Name?' }));
    const byBackend = await h.create(chat.id, textBody({ title: 'Tag?' }));
    const res = await h.resolve(resolved.id, { selectedOptionIds: ['yes'] });
    expect(res.status).toBe(200);
    expect((await h.cancel(cancelled.id)).status).toBe(200);
    expect((await h.resolve(byBackend.id, { text: ' v2 ', resolvedBy: 'backend' })).status).toBe(200);
    // Refused closings write nothing: not pending, bad payload, unknown request.
    expect((await h.resolve(resolved.id, { selectedOptionIds: ['no'] })).status).toBe(400);
    expect((await h.cancel(resolved.id)).status).toBe(400);
    expect((await h.resolve(cancelled.id, { text: '' })).status).toBe(400);
    expect((await h.cancel('no-such-request')).status).toBe(404);

    const entries = (await all()).slice(before);
    expect(entries).toEqual([
      {
        seq: before + 1,
        at: res.body.resolved_at,
        chat_id: chat.id,
        request_id: resolved.id,
        type: 'choice',
        title: 'Ship it?',
        action: 'resolved',
        actor: 'open',
        resolved_by: 'user',
        payload: { selectedOptionIds: ['yes'] },
        prev_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
        hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      },
      expect.objectContaining({
        seq: before + 2,
        at: expect.stringMatching(ISO),
        request_id: cancelled.id,
        type: 'text_input',
        title: 'Name?',
        action: 'cancelled',
        actor: 'open',
        resolved_by: null,
        payload: null,
      }),
      expect.objectContaining({
        seq: before + 3,
        request_id: byBackend.id,
        action: 'resolved',
        resolved_by: 'backend',
        payload: { text: 'v2' },
      }),
    ]);
  });

  it('an Idempotency-Key replay of a closing adds no entry', async () => {
    const chat = await h.newChat();
    const request = await h.create(chat.id, choiceBody());
    const before = (await all()).length;
    const key = { headers: { 'Idempotency-Key': `decide-${request.id}` } };
    const first = await api.post(`/api/v1/requests/${request.id}/resolve`, { selectedOptionIds: ['no'] }, key);
    const replay = await api.post(`/api/v1/requests/${request.id}/resolve`, { selectedOptionIds: ['no'] }, key);
    expect([first.status, replay.status]).toEqual([200, 200]);
    expect((await all()).length).toBe(before + 1);
  });

  it('numbers concurrent closings 1, 2, 3… without gaps or repeats, and the chain holds', async () => {
    const chats = [await h.newChat(), await h.newChat(), await h.newChat()];
    const requests = await Promise.all(
      Array.from({ length: 12 }, (_, i) => h.create(chats[i % 3]!.id, choiceBody({ title: `q${i}` }))),
    );
    const answers = await Promise.all(
      requests.map((r, i) => (i % 3 === 0 ? h.cancel(r.id) : h.resolve(r.id, { selectedOptionIds: ['yes'] }))),
    );
    expect(answers.map((a) => a.status)).toEqual(requests.map(() => 200));
    const entries = await all();
    expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => i + 1));
    for (const r of requests) expect(entries.filter((e) => e.request_id === r.id)).toHaveLength(1);
    expect(verify(entries)).toBe(0);
  });

  it('an edited or removed entry breaks every later link', async () => {
    const entries = await all();
    expect(entries.length).toBeGreaterThanOrEqual(4);
    const edited = entries.map((e) => ({ ...e }));
    edited[1]!.payload = { selectedOptionIds: ['no'] };
    expect(verify(edited)).toBe(2);
    const removed = entries.filter((_, i) => i !== 2);
    expect(verify(removed)).toBe(4);
    // Order of keys does not matter to the chain: the canonical form sorts them.
    const reordered = entries.map((e) => Object.fromEntries(Object.entries(e).reverse()));
    expect(verify(reordered)).toBe(0);
  });

  it('pages by `after` and `limit` (1..500, default 100); `next` is null at the end', async () => {
    const entries = await all();
    const n = entries.length;
    const first = await api.get('/api/v1/decisions');
    expect(first.body.data).toEqual(entries.slice(0, 100));
    expect(first.body.next).toBe(n > 100 ? 100 : null);
    const tail = await api.get(`/api/v1/decisions?after=${n - 2}&limit=2`);
    expect(tail.body).toEqual({ data: entries.slice(n - 2), next: null });
    const middle = await api.get(`/api/v1/decisions?after=1&limit=2`);
    expect(middle.body).toEqual({ data: entries.slice(1, 3), next: 3 });
    expect((await api.get(`/api/v1/decisions?after=${n}`)).body).toEqual({ data: [], next: null });
    for (const q of ['limit=0', 'limit=501', 'limit=a'])
      expectSchemaError(await api.get(`/api/v1/decisions?${q}`), 'limit');
    for (const q of ['after=-1', 'after=x']) expectSchemaError(await api.get(`/api/v1/decisions?${q}`), 'after');
  });
});
