/**
 * A stream opened without a cursor misses nothing (issue 33 item 20). Writers take their event
 * numbers before they commit, so when a stream opens, a number below the last one handed out may
 * belong to a transaction still committing. Its event is emitted after the connection: the stream
 * delivers it, in sequence order, while events committed before the connection (below or above
 * it) are still not sent (§6.4: "nothing emitted before it").
 *
 * The stream delivering a commit that comes after it opened, for a number taken before:
 * live-start-held.test.ts (sources only: it holds a transaction in the test's own process).
 */
import { describe, expect, it } from '@jest/globals';
import { ok, persisted, sleep, streamsApi } from './support.js';

const { api, s } = streamsApi();

const newChat = async () => ok(await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' })).body;

describe('a stream opened without a cursor', () => {
  it('with nothing in flight, starts at the head: nothing from before the connection', async () => {
    const chat = await newChat();
    ok(await api.post(`/api/v1/chats/${chat.id}/mark-unread`));
    const c = await s.open('?ephemeral=false');
    ok(await api.post(`/api/v1/chats/${chat.id}/mark-read`));
    await c.waitFor((x) => persisted(x).length >= 1, 15_000);
    await sleep(300); // kept: an absence (nothing more may follow), observable only by waiting
    expect(persisted(c).map((e) => e.event)).toEqual(['chat.read']);
    c.close();
  });
});
