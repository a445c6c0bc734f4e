/**
 * Outbound webhooks (contract §6.6) against a loopback receiver, delivered as npm start delivers
 * them (the event-log tail feeding core/webhooks.ts): signing over the raw body, headers, enriched
 * and raw payloads, retries on 5xx and timeouts with back-off, 4xx stopping, independent hooks,
 * delivery records, and one delivery per event when the same event is handed over twice. Every
 * body received is checked against the published OpenAPI document's `webhooks`.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type * as HooksRepo from '../../../functions/store/hooks-repo.js';
import { useApi } from '../../support/api.js';
import { webhookProblem } from '../../support/openapi-check.js';
import { sleep } from '../../../functions/platform/retry.js';
import { eventually } from '../../support/wait.js';

interface Received {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  raw: string;
  at: number;
}

/** The receiver: records every request; `answer` decides each response (status, or 'hang'). */
const received: Received[] = [];
let answer: (path: string, nth: number) => number | 'hang' = () => 200;
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const path = req.url ?? '/';
    received.push({ path, headers: req.headers, raw: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
    const verdict = answer(path, received.filter((r) => r.path === path).length);
    if (verdict === 'hang') return; // never answers: the attempt times out
    res.writeHead(verdict, { 'content-type': 'text/plain' }).end('ok');
  });
});
await new Promise<void>((ok) => receiver.listen(0, '127.0.0.1', ok));
const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

const SECRET = 'whsec_test_0123456789';
const config = {
  agents: [{ id: 'assistant', name: 'Assistant', description: '' }],
  models: [{ id: 'm', name: 'M', description: '' }],
  hooks: [
    {
      url: `${base}/main`,
      events: ['message.created', 'request.resolved', 'request.cancelled', 'request.reminder', 'chat.created'],
      signingSecret: SECRET,
      headers: { 'x-tenant': 'acme' },
      timeoutMs: 400,
      maxRetries: 2,
    },
    { url: `${base}/second`, events: ['chat.created'] },
    // For "never holds up": an attempt of 3 s, which a delivery inline with the request would wait out.
    { url: `${base}/slow`, events: ['chat.archived'], timeoutMs: 3000, maxRetries: 0 },
  ],
};
const api = useApi({ config, env: { HOOK_RETRY_BASE_MS: '100' } });
afterAll(() => new Promise<void>((ok) => receiver.close(() => ok())));
beforeEach(() => {
  received.length = 0;
  answer = () => 200;
});
// Every body a hook received is what the published document's `webhooks` describe for its type.
afterEach(() => {
  const problems = received.map((r) => webhookProblem(JSON.parse(r.raw))).filter(Boolean);
  expect(problems).toEqual([]);
});

/** Waits until `check` holds over what the receiver got (the paths received are the failure's detail). */
const waitFor = (check: () => boolean, ms = 8000) =>
  eventually(() => received.map((r) => r.path), check, { timeoutMs: ms, what: 'the webhook deliveries' });
/** The recorded attempts to the /main hook of an event, once there are `count` of them. */
const mainAttempts = (eventId: string, count: number) =>
  eventually(
    async () => (await Hooks.attemptsOf(eventId)).filter((a) => a.url.endsWith('/main')),
    (found) => found.length >= count,
    { timeoutMs: 8000, what: `${count} recorded attempts to /main` },
  );
const bodies = (path: string) => received.filter((r) => r.path === path).map((r) => JSON.parse(r.raw));
const newChat = async () =>
  (await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm', title: 'Hooked' })).body as {
    id: string;
  };
let Hooks: typeof HooksRepo;
beforeAll(async () => {
  Hooks = await import('../../../functions/store/hooks-repo.js');
});

describe('delivery (§6.6)', () => {
  it('POSTs { id, type, timestamp, payload } with the hook headers and an HMAC of the exact raw body', async () => {
    const chat = await newChat();
    await waitFor(() => bodies('/main').length === 1 && bodies('/second').length === 1);
    const [hit] = received.filter((r) => r.path === '/main');
    expect(hit!.headers['content-type']).toBe('application/json');
    expect(hit!.headers['x-tenant']).toBe('acme');
    const expected = `sha256=${createHmac('sha256', SECRET).update(hit!.raw).digest('hex')}`;
    expect(hit!.headers['x-opengram-signature']).toBe(expected);
    const body = JSON.parse(hit!.raw);
    expect(Object.keys(body).sort()).toEqual(['id', 'payload', 'timestamp', 'type']);
    expect(body).toMatchObject({ type: 'chat.created', payload: { chatId: chat.id } });
    expect(body.id).toMatch(/^[A-Za-z0-9_-]{21}$/);
    // The second hook has no secret: no signature header.
    expect(received.find((r) => r.path === '/second')!.headers['x-opengram-signature']).toBeUndefined();
  });

  it('enriches message.created from the current message and chat', async () => {
    const chat = await newChat();
    const msg = await api.post(`/api/v1/chats/${chat.id}/messages`, {
      role: 'agent',
      senderId: 'assistant',
      content: 'hello hooks',
      trace: { step: 1 },
    });
    await waitFor(() => bodies('/main').some((b) => b.type === 'message.created'));
    const body = bodies('/main').find((b) => b.type === 'message.created');
    expect(body.payload).toEqual({
      chatId: chat.id,
      agentIds: ['assistant'],
      messageId: msg.body.id,
      senderId: 'assistant',
      role: 'agent',
      content: 'hello hooks',
      modelId: 'm',
      pendingRequestsCount: 0,
      trace: { step: 1 },
    });
  });

  it('enriches request.resolved and request.cancelled from the current request', async () => {
    const chat = await newChat();
    const create = (title: string) =>
      api.post(`/api/v1/chats/${chat.id}/requests`, {
        type: 'choice',
        title,
        config: { options: [{ id: 'yes', label: 'Yes' }] },
      });
    const a = (await create('Ship it?')).body;
    const b = (await create('Or not?')).body;
    expect((await api.post(`/api/v1/requests/${a.id}/resolve`, { selectedOptionIds: ['yes'] })).status).toBe(200);
    expect((await api.post(`/api/v1/requests/${b.id}/cancel`)).status).toBe(200);
    await waitFor(() => bodies('/main').filter((x) => x.type.startsWith('request.')).length === 2);
    const resolved = bodies('/main').find((x) => x.type === 'request.resolved');
    const cancelled = bodies('/main').find((x) => x.type === 'request.cancelled');
    expect(resolved.payload).toEqual({
      chatId: chat.id,
      requestId: a.id,
      type: 'choice',
      status: 'resolved',
      resolutionPayload: { selectedOptionIds: ['yes'] },
      trace: null,
    });
    expect(cancelled.payload).toMatchObject({ chatId: chat.id, requestId: b.id, status: 'cancelled' });
    // request.created is not listed by any hook: never sent.
    expect(bodies('/main').some((x) => x.type === 'request.created')).toBe(false);
  });

  it('routes a reminder and an expiry (§5.5.6): the raw reminder, the expiry with its reason', async () => {
    const chat = await newChat();
    const request = (
      await api.post(`/api/v1/chats/${chat.id}/requests`, {
        type: 'choice',
        title: 'Approve?',
        config: { options: [{ id: 'yes', label: 'Yes' }] },
        deadline: { inSeconds: 600, remindBeforeSeconds: [300] },
      })
    ).body;
    const { getConfig } = await import('../../../functions/core/instance-config.js');
    const { fireRequestTimer } = await import('../../../functions/core/request-expiry.js');
    const at = Date.parse(request.deadline.at);
    const timer = { requestId: request.id, at: request.deadline.at };
    expect(
      await fireRequestTimer(
        await getConfig(),
        { ...timer, kind: 'remind', before: 300, fireAtMs: at - 300_000 },
        at - 300_000,
      ),
    ).toBe('reminded');
    expect(await fireRequestTimer(await getConfig(), { ...timer, kind: 'expire', fireAtMs: at }, at)).toBe('expired');
    await waitFor(() => bodies('/main').filter((x) => x.payload.requestId === request.id).length === 2);
    // Each event is delivered on its own (§6.6): under load the expiry's delivery arrived first once.
    const delivered = bodies('/main').filter((x) => x.payload.requestId === request.id);
    expect(delivered.map((x) => x.type).sort()).toEqual(['request.cancelled', 'request.reminder']);
    const reminder = delivered.find((x) => x.type === 'request.reminder')!;
    const expiry = delivered.find((x) => x.type === 'request.cancelled')!;
    expect([reminder.type, reminder.payload]).toEqual([
      'request.reminder',
      {
        chatId: chat.id,
        requestId: request.id,
        type: 'choice',
        title: 'Approve?',
        deadlineAt: request.deadline.at,
        secondsLeft: 300,
      },
    ]);
    expect([expiry.type, expiry.payload]).toEqual([
      'request.cancelled',
      {
        chatId: chat.id,
        requestId: request.id,
        type: 'choice',
        status: 'cancelled',
        resolutionPayload: null,
        trace: null,
        reason: 'deadline',
      },
    ]);
  });
});

describe('retries (§6.6)', () => {
  it('retries a 5xx with back-off until a 2xx, and records every attempt', async () => {
    answer = (path, nth) => (path === '/main' && nth < 3 ? 503 : 200);
    await newChat();
    await waitFor(() => bodies('/main').length === 3);
    const times = received.filter((r) => r.path === '/main').map((r) => r.at);
    // min(base × 2^(k−1) + random(0..base/2)): 100–150 ms, then 200–250 ms (base 100 ms in this test).
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(95);
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(195);
    const attempts = await mainAttempts(bodies('/main')[0].id, 3);
    expect(attempts.map((a) => [a.attempt, a.status, a.success])).toEqual([
      [1, 503, false],
      [2, 503, false],
      [3, 200, true],
    ]);
    expect(attempts[0]!.error).toBe('HTTP 503');
    // The same body every time.
    expect(new Set(received.filter((r) => r.path === '/main').map((r) => r.raw)).size).toBe(1);
  });

  it('gives up after 1 + maxRetries attempts on timeouts', async () => {
    answer = (path) => (path === '/main' ? 'hang' : 200);
    const started = Date.now();
    await newChat();
    await waitFor(() => bodies('/main').length === 3);
    const main = await mainAttempts(bodies('/main')[0].id, 3);
    expect(main.map((a) => [a.attempt, a.status, a.success])).toEqual([
      [1, null, false],
      [2, null, false],
      [3, null, false],
    ]);
    expect(main[0]!.error).toMatch(/timed out/);
    // Kept: "no fourth attempt" is an absence, observable only by waiting past when it would come.
    await sleep(600);
    expect(bodies('/main')).toHaveLength(3);
    expect(Date.now() - started).toBeGreaterThan(3 * 400);
  });

  it('stops at a 4xx; the other hook is delivered independently', async () => {
    answer = (path) => (path === '/main' ? 410 : 200);
    await newChat();
    await waitFor(() => bodies('/main').length === 1 && bodies('/second').length === 1);
    // Kept: "no retry after a 4xx" is an absence, observable only by waiting past when it would come.
    await sleep(600);
    expect(bodies('/main')).toHaveLength(1);
    const attempts = await Hooks.attemptsOf(bodies('/main')[0].id);
    expect(attempts.map((a) => [a.url.slice(base.length), a.status, a.success]).sort()).toEqual([
      ['/main', 410, false],
      ['/second', 200, true],
    ]);
  });

  it('never holds up the request that made the event', async () => {
    const chat = await newChat();
    answer = (path) => (path === '/slow' ? 'hang' : 200);
    const started = Date.now();
    expect((await api.post(`/api/v1/chats/${chat.id}/archive`)).status).toBe(200);
    // Its hook's one attempt hangs for its 3 s timeout: inline, the answer would come after it.
    // (2 s: room for a loaded machine's slow request, where a 400 ms bound once was tight.)
    expect(Date.now() - started).toBeLessThan(2000);
    await waitFor(() => bodies('/slow').length === 1);
    expect(bodies('/slow')[0]).toMatchObject({ type: 'chat.archived', payload: { chatId: chat.id } });
    // Let the attempt run out and be recorded, so nothing of this test arrives during the next one.
    const attempts = await eventually(
      () => Hooks.attemptsOf(bodies('/slow')[0].id),
      (found) => found.length === 1,
      { timeoutMs: 8000, what: 'the recorded attempt to /slow' },
    );
    expect(attempts[0]).toMatchObject({ attempt: 1, status: null, success: false });
  });
});

describe('at most once', () => {
  it('delivers an event handed over twice only once per hook', async () => {
    const chat = await newChat();
    const mine = (path: string) => bodies(path).filter((b) => b.payload.chatId === chat.id);
    await waitFor(() => mine('/main').length === 1 && mine('/second').length === 1);
    const event = mine('/main')[0];
    const { deliverEvent } = await import('../../../functions/core/webhooks.js');
    const { getConfig } = await import('../../../functions/core/instance-config.js');
    const stored = { seq: 0, id: event.id, type: event.type, timestamp: event.timestamp, payload: { chatId: chat.id } };
    await deliverEvent(stored, await getConfig());
    await deliverEvent(stored, await getConfig());
    // Kept: "no second delivery" is an absence, observable only by waiting past when it would come.
    await sleep(300);
    expect([mine('/main').length, mine('/second').length]).toEqual([1, 1]);
  });
});
