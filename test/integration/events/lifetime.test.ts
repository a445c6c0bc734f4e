/**
 * Keepalives and the bounded connection lifetime (§6.4 framing 3, connection lifetime; §13
 * item 4) with SSE_LIFETIME_MS = 3000 and SSE_KEEPALIVE_MS = 700: keepalive comments while
 * idle; the stream ends by itself with a final comment and a retry hint; a client that
 * reconnects with the last persisted event id as cursor loses and repeats nothing.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { useApi } from '../../support/api.js';
import { config, idsOf, lastLoggedId, logAfter, ok, persisted, sleep, streams } from './support.js';

const LIFETIME_MS = 3000;
const KEEPALIVE_MS = 700;

const s = streams(() => api);
const api = useApi({
  config,
  env: { SSE_LIFETIME_MS: String(LIFETIME_MS), SSE_KEEPALIVE_MS: String(KEEPALIVE_MS) },
});

let chatId: string;
beforeAll(async () => {
  chatId = ok(await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' })).body.id;
});

let flip = 0;
const write = async () => ok(await api.post(`/api/v1/chats/${chatId}/${flip++ % 2 ? 'mark-read' : 'mark-unread'}`));

describe('keepalive and lifetime', () => {
  it('writes keepalive comments while idle, then ends by itself with a final comment and a retry hint', async () => {
    const openedAt = Date.now();
    const c = await s.open();
    // Keepalives come while the stream is idle, spaced by about the keepalive interval.
    const times: number[] = [];
    let seen = 0;
    while (Date.now() - openedAt < LIFETIME_MS + 3000) {
      const keepalives = c.frames.filter((f) => f.kind === 'comment' && f.text === 'keepalive').length;
      if (keepalives > seen) {
        seen = keepalives;
        times.push(Date.now());
      }
      if (c.frames.at(-1)?.kind === 'retry' && c.frames.length > 2) break;
      // Kept (time is the behavior): samples when each keepalive arrives.
      await sleep(20);
    }
    await c.ended;
    const lived = Date.now() - openedAt;
    expect(lived).toBeGreaterThanOrEqual(LIFETIME_MS - 200);
    expect(lived).toBeLessThan(LIFETIME_MS + 2500);
    expect(seen).toBeGreaterThanOrEqual(2);
    expect(times[0]! - openedAt).toBeLessThan(KEEPALIVE_MS + 1500);
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeLessThan(KEEPALIVE_MS + 1500);
    // Opening comment, retry hint, keepalives only, then a final comment, the position reached
    // (an id-only block: it sets a browser's Last-Event-ID) and a retry hint.
    expect(c.frames.slice(0, 2)).toEqual([
      { kind: 'comment', text: 'stream opened' },
      { kind: 'retry', ms: 1000 },
    ]);
    const middle = c.frames.slice(2, -3);
    expect(middle.length).toBe(seen);
    for (const f of middle) expect(f).toEqual({ kind: 'comment', text: 'keepalive' });
    const [final, position, retry] = c.frames.slice(-3);
    expect(final!.kind).toBe('comment');
    expect(position).toEqual({ kind: 'id', id: expect.stringMatching(/^[A-Za-z0-9_-]{21}$/) });
    expect(final).not.toEqual({ kind: 'comment', text: 'keepalive' });
    expect((final as { text: string }).text.length).toBeGreaterThan(0);
    expect(retry).toEqual({ kind: 'retry', ms: 1000 });
    expect(c.events()).toEqual([]);
  });

  it(
    'a client reconnecting with the last persisted id as cursor receives what was written in between, ' + 'once',
    async () => {
      const before = await lastLoggedId(api);
      const first = await s.open();
      // Writes before, across and after the end of the first connection.
      let writing = true;
      const writer = (async () => {
        while (writing) {
          await write();
          // Kept (time is the behavior): writes spread across the end of the lifetime.
          await sleep(150);
        }
      })();
      await first.ended;
      const received = persisted(first);
      expect(received.length).toBeGreaterThan(3);
      expect(first.frames.at(-1)).toEqual({ kind: 'retry', ms: 1000 });
      // Events written between the two connections.
      await write();
      await write();
      // Kept (time is the behavior): the writer keeps writing while no connection is open.
      await sleep(300);
      const last = received.at(-1)!.id;
      const second = await s.open(`?cursor=${last}`);
      // Kept (time is the behavior): and while the second one is open.
      await sleep(800);
      writing = false;
      await writer;
      await write();
      const expected = idsOf(await logAfter(api, before));
      await second.waitFor((x) => received.length + persisted(x).length >= expected.length, 5000);
      // Kept: an absence (nothing more may follow), observable only by waiting
      await sleep(300);
      const union = [...idsOf(received), ...idsOf(persisted(second))];
      expect(new Set(union).size).toBe(union.length);
      expect(union).toEqual(expected);
      // The second connection starts exactly after the last event the first one delivered.
      expect(idsOf(persisted(second))).toEqual(idsOf(await logAfter(api, last)));
      second.close();
    },
  );
});
