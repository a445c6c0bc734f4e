/**
 * A tour of the rehearsed deployment (issue 34 item 3): one client's day through the
 * distribution, calling every route of the assembly and waking every job (the flush queue's
 * consumer, the table stream's readers, both schedules, the stream-timeout state machine and its
 * expiry task), with IAM enforced: no call may be denied, no route may answer a server error.
 * With the other rehearsal files in CI it runs every function of the assembly at least once
 * (the project's teardown checks it). Schedules and the state machine's waits run 20x faster.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import sharp from 'sharp';
import { startRehearsal } from '../../local/rehearse/rehearsal.js';
import type { Rehearsal } from '../../local/rehearse/rehearsal.js';
import { recordInvocations } from '../support/rehearsed-api.js';

let rehearsal: Rehearsal;
const config = {
  agents: [{ id: 'assistant', name: 'Assistant', description: '' }],
  models: [{ id: 'm', name: 'M', description: '' }],
  server: { streamTimeoutSeconds: 5, dispatch: { mode: 'immediate' } },
};

beforeAll(async () => {
  const endpoint = process.env.TEST_DYNAMODB_ENDPOINT;
  const assembly = process.env.REHEARSAL_ASSEMBLY;
  if (!assembly || !endpoint) throw new Error('Run through the rehearsal project (its global setup synthesizes).');
  rehearsal = await startRehearsal({
    assemblyDir: assembly,
    dynamoEndpoint: endpoint,
    tableName: `tour-${randomUUID()}`,
    port: 0,
    inputs: {
      INSTANCE_CONFIG: JSON.stringify(config),
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      OPENGRAM_WRITE_RATE_LIMIT_MAX: '1000000',
    },
    timeScale: 0.05,
    log: () => undefined,
    functionOutput: 'discard',
  });
});

afterAll(async () => {
  if (!rehearsal) return;
  await rehearsal.stop();
  recordInvocations(rehearsal);
});

interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

async function call(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await fetch(`${rehearsal.url}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    redirect: 'manual',
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = text;
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/** An answer of the function itself, in the contract's terms: never a 5xx, an error always the envelope. */
function answered(answer: Answer, expected?: number): void {
  if (expected !== undefined)
    expect({ status: answer.status, body: answer.body }).toEqual({ status: expected, body: answer.body });
  if (expected !== undefined && answer.status !== expected)
    throw new Error(`${answer.status}: ${JSON.stringify(answer.body)}`);
  expect(answer.status).toBeLessThan(500);
  if (answer.status >= 400) expect(answer.body.error.code).toEqual(expect.any(String));
}

const until = async <T>(what: string, probe: () => Promise<T | undefined>, ms = 30_000): Promise<T> => {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`Timed out waiting for ${what}.`);
    await new Promise((r) => setTimeout(r, 250));
  }
};

describe('the rehearsed deployment, route by route', () => {
  let chat: string;
  let other: string;

  test('service routes: health, config, the API documents, the catch-all', async () => {
    answered(await call('GET', '/api/v1/health'), 200);
    answered(await call('GET', '/api/v1/config'), 200);
    const doc = await call('GET', '/api/v1/doc');
    answered(doc, 200);
    expect(doc.body.openapi).toMatch(/^3\./);
    const reference = await call('GET', '/api/v1/reference');
    expect(reference.status).toBe(200);
    answered(await call('GET', '/api/v1/no-such-route'), 404);
    answered(await call('OPTIONS', '/api/v1/chats', undefined, { origin: 'https://elsewhere.example' }));
    answered(await call('PATCH', '/api/v1/config/admin', { appName: 'Rehearsed' }), 200);
    answered(await call('POST', '/api/v1/config/admin/validate-auto-rename', { provider: 'openai', modelId: 'x' }));
  });

  test('chats: create, list, read, update, archive, read marks, summaries, typing', async () => {
    const created = await call('POST', '/api/v1/chats', { agentIds: ['assistant'], modelId: 'm', tags: ['tour'] });
    answered(created, 201);
    chat = created.body.id;
    other = (await call('POST', '/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' })).body.id;
    const listed = await call('GET', '/api/v1/chats');
    answered(listed, 200);
    expect(listed.body.data.map((c: { id: string }) => c.id)).toEqual(expect.arrayContaining([chat, other]));
    answered(await call('GET', `/api/v1/chats/${chat}`), 200);
    answered(await call('PATCH', `/api/v1/chats/${chat}`, { title: 'The tour' }), 200);
    answered(await call('POST', `/api/v1/chats/${other}/archive`), 200);
    answered(await call('POST', `/api/v1/chats/${other}/unarchive`), 200);
    answered(await call('POST', `/api/v1/chats/${chat}/mark-unread`), 200);
    answered(await call('POST', `/api/v1/chats/${chat}/mark-read`), 200);
    answered(await call('GET', '/api/v1/chats/unread-summary'), 200);
    answered(await call('GET', '/api/v1/chats/pending-summary'), 200);
    answered(await call('POST', `/api/v1/chats/${chat}/typing`, { agentId: 'assistant' }));
    answered(await call('POST', `/api/v1/chats/${chat}/user-typing`));
    answered(await call('GET', '/api/v1/tags/suggestions?q=to'), 200);
  });

  test('messages: user and agent messages, a stream written, completed and cancelled, search finds it', async () => {
    answered(await call('POST', `/api/v1/chats/${chat}/messages`, { role: 'user', content: 'hello tour' }), 201);
    const agent = await call('POST', `/api/v1/chats/${chat}/messages`, {
      role: 'agent',
      senderId: 'assistant',
      content: 'zephyrine answer',
    });
    answered(agent, 201);
    const stream = await call('POST', `/api/v1/chats/${chat}/messages`, {
      role: 'agent',
      senderId: 'assistant',
      streaming: true,
    });
    answered(stream, 201);
    const id = stream.body.id;
    answered(await call('POST', `/api/v1/chats/${chat}/messages/${id}/chunks`, { deltaText: 'one ' }));
    answered(await call('POST', `/api/v1/messages/${id}/chunks`, { deltaText: 'two' }));
    answered(await call('POST', `/api/v1/messages/${id}/complete`, {}));
    const again = (
      await call('POST', `/api/v1/chats/${chat}/messages`, { role: 'agent', senderId: 'assistant', streaming: true })
    ).body.id;
    answered(await call('POST', `/api/v1/chats/${chat}/messages/${again}/complete`, { finalText: 'done' }));
    const third = (
      await call('POST', `/api/v1/chats/${chat}/messages`, { role: 'agent', senderId: 'assistant', streaming: true })
    ).body.id;
    answered(await call('POST', `/api/v1/chats/${chat}/messages/${third}/cancel`));
    const fourth = (
      await call('POST', `/api/v1/chats/${chat}/messages`, { role: 'agent', senderId: 'assistant', streaming: true })
    ).body.id;
    answered(await call('POST', `/api/v1/messages/${fourth}/cancel`));
    answered(
      await call('POST', `/api/v1/chats/${chat}/messages`, { role: 'agent', senderId: 'assistant', streaming: true }),
      201,
    );
    answered(await call('POST', `/api/v1/chats/${chat}/messages/cancel-streaming`));
    const listed = await call('GET', `/api/v1/chats/${chat}/messages`);
    answered(listed, 200);
    expect(listed.body.data.map((m: { id: string }) => m.id)).toEqual(expect.arrayContaining([agent.body.id, id]));
    // The table stream → the search writer's mapping (its content filter passes final messages).
    // Message text is searched with scope=messages (or all): the default scope is titles (§5.7).
    const hit = await until('the search index to find the agent message', async () => {
      const found = await call('GET', '/api/v1/search?q=zephyrine&scope=messages');
      answered(found, 200);
      return JSON.stringify(found.body).includes(agent.body.id) ? found : undefined;
    });
    expect(hit.body.messages.map((m: { id: string }) => m.id)).toContain(agent.body.id);
    const titlesOnly = await call('GET', '/api/v1/search?q=zephyrine');
    answered(titlesOnly, 200);
    expect(titlesOnly.body.messages).toEqual([]);
  });

  test('a stream left open is cancelled by its timer: the flush queue check, then the state machine and its expiry task', async () => {
    const open = (
      await call('POST', `/api/v1/chats/${chat}/messages`, { role: 'agent', senderId: 'assistant', streaming: true })
    ).body.id;
    // Chunks every second until well past the delayed check (SQS delays are not scaled: it comes
    // 5 + 1 s after the create), so the check finds the stream active and starts the state machine,
    // whose expiry task (its waits scaled) looks again until the chunks have stopped for 5 s.
    for (let i = 0; i < 22; i++) {
      answered(await call('POST', `/api/v1/messages/${open}/chunks`, { deltaText: `${i} ` }), 200);
      await new Promise((r) => setTimeout(r, 1000));
    }
    expect(rehearsal.executions().find((e) => e.name === open)?.status).toBe('RUNNING');
    const ended = await until(
      'the stream-timeout execution to end the stream',
      async () => {
        const execution = rehearsal.executions().find((e) => e.name === open);
        return execution && execution.status !== 'RUNNING' ? execution : undefined;
      },
      60_000,
    );
    // Cancelled by the expiry task (done: it found the stream overdue and ended it), with no denial
    // of the machine's role on the way.
    expect({ status: ended.status, output: JSON.parse(ended.output ?? 'null'), error: ended.error }).toEqual({
      status: 'SUCCEEDED',
      output: expect.objectContaining({ messageId: open, done: true }),
      error: undefined,
    });
    expect([...rehearsal.host.invocations.keys()].some((k) => /ExpireStream/.test(k))).toBe(true);
    const listed = await call('GET', `/api/v1/chats/${chat}/messages`);
    answered(listed, 200);
    expect(listed.body.data.find((m: { id: string }) => m.id === open)?.stream_state).toBe('cancelled');
  }, 120_000);

  test('requests: create, update, resolve, cancel, list; a deadline expires on its flush-queue timer; the approvals list and the decision log', async () => {
    // §5.5.6: its timer is a delayed record on the flush queue (the create route's SendMessage),
    // which the flush consumer runs: the request closed with its default, and its decision entry.
    const timed = await call('POST', `/api/v1/chats/${chat}/requests`, {
      type: 'choice',
      title: 'Hold or go?',
      config: {
        options: [
          { id: 'hold', label: 'Hold' },
          { id: 'go', label: 'Go' },
        ],
      },
      deadline: {
        inSeconds: 10,
        onExpiry: 'resolve',
        default: { selectedOptionIds: ['hold'] },
        remindBeforeSeconds: [8],
      },
    });
    answered(timed, 201);
    const made = await call('POST', `/api/v1/chats/${chat}/requests`, {
      type: 'choice',
      title: 'Pick one',
      config: {
        options: [
          { id: 'a', label: 'A' },
          { id: 'b', label: 'B' },
        ],
      },
    });
    answered(made, 201);
    answered(await call('PATCH', `/api/v1/requests/${made.body.id}`, { title: 'Pick one, please' }), 200);
    answered(await call('POST', `/api/v1/requests/${made.body.id}/resolve`, { selectedOptionIds: ['a'] }));
    const second = await call('POST', `/api/v1/chats/${chat}/requests`, {
      type: 'text_input',
      title: 'Say something',
      config: {},
    });
    answered(second, 201);
    answered(await call('POST', `/api/v1/requests/${second.body.id}/cancel`));
    answered(await call('GET', `/api/v1/chats/${chat}/requests?status=all`), 200);
    const pending = await call('GET', '/api/v1/requests?status=pending&limit=1');
    answered(pending, 200);
    expect(pending.body.data[0]?.id).toBe(timed.body.id);
    const expired = await until('the deadline to resolve the request with its default', async () => {
      const all = await call('GET', `/api/v1/chats/${chat}/requests?status=all`);
      const found = all.body.data.find((r: { id: string }) => r.id === timed.body.id);
      return found?.status === 'resolved' ? found : undefined;
    });
    expect([expired.resolved_by, expired.resolution_payload, typeof expired.expired_at]).toEqual([
      'backend',
      { selectedOptionIds: ['hold'] },
      'string',
    ]);
    // On time (the sweep's safety net would come 30 s late at the soonest): the expiry's record was
    // sent by the reminder's when it fired, one chain per request (functions/platform/request-timer.ts).
    expect(Date.parse(expired.expired_at) - Date.parse(timed.body.deadline.at)).toBeLessThan(5_000);
    const log = await call('GET', '/api/v1/decisions');
    answered(log, 200);
    expect(
      log.body.data.map((e: { request_id: string; action: string; actor: string }) => [
        e.request_id,
        e.action,
        e.actor,
      ]),
    ).toEqual([
      [made.body.id, 'resolved', 'open'],
      [second.body.id, 'cancelled', 'open'],
      [timed.body.id, 'expired', 'deadline'],
    ]);
  }, 60_000);

  test('media: an image through the API with its thumbnail, a file through an upload session, downloads, removal', async () => {
    const png = await sharp({ create: { width: 64, height: 32, channels: 3, background: '#0088ff' } })
      .png()
      .toBuffer();
    const up = await call('POST', `/api/v1/chats/${chat}/media`, {
      fileName: 'tour.png',
      contentType: 'image/png',
      base64Data: png.toString('base64'),
    });
    answered(up, 201);
    answered(await call('GET', `/api/v1/media/${up.body.id}`), 200);
    answered(await call('GET', `/api/v1/chats/${chat}/media`), 200);
    const file = await fetch(`${rehearsal.url}/api/v1/files/${up.body.id}`);
    expect(file.status).toBe(200);
    expect(Buffer.from(await file.arrayBuffer()).equals(png)).toBe(true);
    expect((await fetch(`${rehearsal.url}/api/v1/files/${up.body.id}/thumbnail`)).status).toBe(200);
    const bytes = Buffer.alloc(1024, 7);
    const session = await call('POST', `/api/v1/chats/${chat}/media/uploads`, {
      fileName: 'notes.pdf',
      contentType: 'application/pdf',
      byteSize: bytes.length,
    });
    answered(session, 201);
    const form = new FormData();
    for (const [k, v] of Object.entries(session.body.fields as Record<string, string>)) form.append(k, v);
    form.append('file', new Blob([bytes]), 'notes.pdf');
    const url = new URL(session.body.url, rehearsal.url);
    expect((await fetch(url, { method: 'POST', body: form })).status).toBeLessThan(300);
    answered(await call('POST', `/api/v1/chats/${chat}/media/uploads/${session.body.uploadId}/complete`), 201);
    answered(await call('DELETE', `/api/v1/media/${up.body.id}`));
  });

  test('dispatch: claim, heartbeat, complete, fail, claim-many (the flush consumer sealed the batches)', async () => {
    const claim = async () =>
      until('a sealed batch', async () => {
        const got = await call('POST', '/api/v1/dispatch/claim', { workerId: 'w1', waitMs: 1000 });
        answered(got);
        return got.status === 200 ? got : undefined;
      });
    answered(await call('POST', `/api/v1/chats/${chat}/messages`, { role: 'user', content: 'work 1' }), 201);
    const first = await claim();
    const batchId = first.body.batchId ?? first.body.batch?.id ?? first.body.id;
    answered(await call('POST', `/api/v1/dispatch/${batchId}/heartbeat`, { workerId: 'w1' }));
    answered(await call('POST', `/api/v1/dispatch/${batchId}/complete`, { workerId: 'w1' }));
    answered(await call('POST', `/api/v1/chats/${other}/messages`, { role: 'user', content: 'work 2' }), 201);
    const second = await claim();
    const secondId = second.body.batchId ?? second.body.batch?.id ?? second.body.id;
    answered(
      await call('POST', `/api/v1/dispatch/${secondId}/fail`, { workerId: 'w1', reason: 'tour', retryable: false }),
    );
    answered(await call('POST', '/api/v1/dispatch/claim-many', { workerId: 'w2', waitMs: 200, limit: 2 }));
  });

  test('events: the stream through the distribution delivers what happens', async () => {
    const res = await fetch(`${rehearsal.url}/api/v1/events/stream`, { headers: { accept: 'text/event-stream' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    const reader = res.body!.getReader();
    let text = '';
    answered(await call('POST', '/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' }), 201);
    const end = Date.now() + 15_000;
    while (!text.includes('chat.created') && Date.now() < end) {
      const { value, done } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString();
    }
    await reader.cancel();
    expect(text).toContain('event: chat.created');
  });

  test('auth, push and the schedules: answered without a server error; nothing denied all along', async () => {
    answered(await call('POST', '/api/v1/auth/session', { secret: 'nope' }));
    answered(await call('DELETE', '/api/v1/auth/session'));
    answered(await call('DELETE', '/api/v1/auth/sessions'));
    const subscription = { endpoint: 'https://push.example.com/x', keys: { p256dh: 'a', auth: 'b' } };
    answered(await call('POST', '/api/v1/push/subscribe', subscription));
    answered(await call('DELETE', '/api/v1/push/subscribe', { endpoint: subscription.endpoint }));
    answered(await call('POST', '/api/v1/push/test'));
    // Both rules (every minute, 3 s here) have run their sweeps by now, and the effects consumer its events.
    await until('both sweeps and the effects consumer', async () => {
      const ran = [...rehearsal.host.invocations.keys()];
      return ['DispatchSweep', 'TagsSweep', 'EffectsConsumer'].every((n) => ran.some((k) => k.includes(n)))
        ? true
        : undefined;
    });
    expect(rehearsal.denials()).toEqual([]);
  });
});
