/**
 * The event stream's authentication (contract §1.11, §5.9), run by auth.test.ts (read toggle
 * off) and auth-reads.test.ts (read toggle on): with the instance secret enabled the stream
 * always needs it, whatever the read toggle.
 */
import { describe, expect, it } from '@jest/globals';
import { useApi } from '../../support/api.js';
import { config, ok, persisted, streams } from './support.js';

export const SECRET = 'og_test-secret-0123456789abcdefghij';
const UNAUTHORIZED = { error: { code: 'UNAUTHORIZED', message: 'Missing or invalid instance secret.', details: null } };
const AUTH = { headers: { authorization: `Bearer ${SECRET}` } };

/** A whole response, read as text (a stream would show its bytes here). */
async function raw(url: string, headers: Record<string, string> = {}, method = 'GET') {
  const controller = new AbortController();
  // Kept: a guard that aborts a hanging read (a stream never ends), not a pause. Long enough for a
  // loaded machine's first request of the file (3 s was not: the answer came later).
  const timer = setTimeout(() => controller.abort(), 15_000);
  try {
    const res = await fetch(url, { method, headers, signal: controller.signal });
    return { status: res.status, headers: res.headers, text: await res.text() };
  } finally {
    clearTimeout(timer);
  }
}

export function streamAuthTests(readEndpointsRequireInstanceSecret: boolean): void {
  const s = streams(() => api);
  const api = useApi({
    config: {
      ...config,
      security: { instanceSecretEnabled: true, instanceSecret: SECRET, readEndpointsRequireInstanceSecret },
    },
  });

  const streamUrl = (query = '') => `${api.url}/api/v1/events/stream${query}`;
  const expectUnauthorized = async (query: string, headers: Record<string, string> = {}) => {
    const res = await raw(streamUrl(query), headers);
    expect({ query, headers, status: res.status }).toEqual({ query, headers, status: 401 });
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    // The JSON envelope and nothing else: no opening comment, no retry hint.
    expect(JSON.parse(res.text)).toEqual(UNAUTHORIZED);
    expect(res.text).not.toContain('stream opened');
    expect(res.text).not.toContain('retry:');
  };
  const newChat = async () => ok(await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' }, AUTH)).body;

  describe(
    `event stream authentication (readEndpointsRequireInstanceSecret ` + `${readEndpointsRequireInstanceSecret})`,
    () => {
      it('answers 401 JSON, not a stream, without the secret', async () => {
        await expectUnauthorized('');
        await expectUnauthorized('?ephemeral=false');
      });

      it('answers 401 for a wrong bearer header, and for the secret in any other header form', async () => {
        const wrong = [
          'Bearer wrong',
          `Bearer ${SECRET.slice(0, -1)}`,
          `Bearer ${SECRET}x`,
          `bearer ${SECRET}`,
          `Bearer  ${SECRET}`,
          'Bearer ',
          SECRET,
        ];
        for (const authorization of wrong) await expectUnauthorized('', { authorization });
        await expectUnauthorized('', { 'x-instance-secret': SECRET });
      });

      it('answers 401 for a wrong token', async () => {
        for (const token of ['nope', `${SECRET}x`, SECRET.slice(0, -1), '', SECRET.toUpperCase()]) {
          await expectUnauthorized(`?token=${encodeURIComponent(token)}`);
        }
      });

      it(
        'authenticates before checking the query: a bad limit or an unknown cursor without the secret is ' + '401',
        async () => {
          await expectUnauthorized('?limit=0');
          await expectUnauthorized('?ephemeral=yes');
          await expectUnauthorized('?cursor=AAAAAAAAAAAAAAAAAAAAA');
          // With the secret, the same queries are the 400s of §5.9.
          const badLimit = await raw(streamUrl('?limit=0'), AUTH.headers);
          expect(badLimit.status).toBe(400);
          const unknown = await raw(streamUrl(`?cursor=AAAAAAAAAAAAAAAAAAAAA&token=${SECRET}`));
          expect(unknown.status).toBe(400);
          expect(JSON.parse(unknown.text).error.message).toBe('cursor event id was not found.');
        },
      );

      it('streams with the correct Authorization: Bearer header', async () => {
        const c = await s.open('', AUTH.headers);
        expect(c.headers.get('content-type')).toMatch(/^text\/event-stream/);
        const chat = await newChat();
        await c.waitFor((x) => persisted(x).some((e) => e.data.payload.chatId === chat.id), 3000);
        expect(persisted(c).map((e) => [e.event, e.data.payload])).toEqual([['chat.created', { chatId: chat.id }]]);
        c.close();
      });

      it('streams with the correct ?token= query parameter, alone or with other parameters', async () => {
        const c = await s.open(`?token=${encodeURIComponent(SECRET)}`);
        expect(c.headers.get('content-type')).toMatch(/^text\/event-stream/);
        const chat = await newChat();
        await c.waitFor((x) => persisted(x).some((e) => e.data.payload.chatId === chat.id), 3000);
        c.close();
        // Replay by cursor, with the token among the other query parameters.
        const cursor = persisted(c)[0]!.id;
        await ok(await api.post(`/api/v1/chats/${chat.id}/archive`, undefined, AUTH));
        const replay = await s.open(`?cursor=${cursor}&ephemeral=false&limit=1&token=${encodeURIComponent(SECRET)}`);
        await replay.waitFor((x) => persisted(x).length >= 1, 3000);
        expect(persisted(replay).map((e) => [e.event, e.data.payload])).toEqual([
          ['chat.archived', { chatId: chat.id }],
        ]);
        replay.close();
      });

      it('answers a CORS preflight without the secret', async () => {
        const res = await raw(
          streamUrl(),
          { origin: 'https://app.example', 'access-control-request-method': 'GET' },
          'OPTIONS',
        );
        expect(res.status).toBe(204);
        expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example');
      });

      it(
        readEndpointsRequireInstanceSecret
          ? 'other GETs need the secret too (read toggle on), and the stream behaves the same'
          : 'the read toggle off exempts other GETs, not the stream',
        async () => {
          const chat = await newChat();
          const reads = [
            '/api/v1/chats',
            `/api/v1/chats/${chat.id}`,
            '/api/v1/config',
            `/api/v1/chats/${chat.id}/messages`,
          ];
          for (const path of reads) {
            const res = await api.get(path);
            expect({ path, status: res.status }).toEqual({
              path,
              status: readEndpointsRequireInstanceSecret ? 401 : 200,
            });
            expect((await api.get(path, AUTH)).status).toBe(200);
          }
          expect((await api.get('/api/v1/health')).status).toBe(200);
          await expectUnauthorized('');
          const c = await s.open('', AUTH.headers);
          c.close();
        },
      );
    },
  );
}
