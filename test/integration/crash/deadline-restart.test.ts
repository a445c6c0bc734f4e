/**
 * Deadlines across a restart (contract §5.5.6, issue 36): `npm start`'s runtime is killed (kill -9
 * of its process group) with two requests waiting, and started again on the same DATA_DIR after the
 * first one's deadline and the second one's reminder have passed. At start, the deadline that
 * passed while it was down fires at once (the request is cancelled, `reason: "deadline"`), and the
 * reminder that fell due meanwhile is sent once, the deadline it belongs to still being ahead.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { rmSync } from 'node:fs';
import { connect } from '../../support/sse.js';
import { runtimeFolder, startRuntime } from '../../support/runtime.js';
import type { Runtime } from '../../support/runtime.js';
import { sleep } from '../../support/shapes.js';

const { dir: dataDir, configPath } = runtimeFolder('chat-relay-deadline-restart-');
const runtimeEnv = {
  DATA_DIR: dataDir,
  CONFIG_PATH: configPath,
  POWERTOOLS_LOG_LEVEL: 'SILENT',
};

let runtime: Runtime | undefined;
afterAll(async () => {
  await runtime?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function must(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${runtime!.url}/api/v1${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

const question = { type: 'choice', title: 'Proceed?', config: { options: [{ id: 'yes', label: 'Yes' }] } };

describe('deadlines across a restart (§5.5.6)', () => {
  it('a deadline that passed while down fires at start; a missed reminder is sent once', async () => {
    runtime = await startRuntime(runtimeEnv);
    const sse = await connect(`${runtime.url}/api/v1/events/stream`);
    const chat = await must('POST', '/chats', { agentIds: ['assistant'], modelId: 'm' });
    const expiring = await must('POST', `/chats/${chat.id}/requests`, { ...question, deadline: { inSeconds: 10 } });
    const reminded = await must('POST', `/chats/${chat.id}/requests`, {
      ...question,
      deadline: { inSeconds: 60, remindBeforeSeconds: [50] },
    });
    await sse.waitFor((c) => c.events().filter((e) => e.event === 'request.created').length === 2);
    const resumeAfter = sse.events().at(-1)!.id;
    sse.close();
    await runtime.crash();

    // Down past the first deadline and the second one's reminder.
    const downUntil = Date.parse(expiring.deadline.at) + 1000;
    await sleep(Math.max(0, downUntil - Date.now()));
    runtime = await startRuntime(runtimeEnv);
    const up = Date.now();

    const replay = await connect(`${runtime.url}/api/v1/events/stream`, { 'last-event-id': resumeAfter });
    await replay.waitFor(
      (c) =>
        c.events().some((e) => e.event === 'request.cancelled') &&
        c.events().some((e) => e.event === 'request.reminder'),
      15_000,
    );
    const events = replay.events().map((e) => [e.event, e.data.payload.requestId, e.data.payload.reason ?? null]);
    expect(events).toEqual(
      expect.arrayContaining([
        ['request.cancelled', expiring.id, 'deadline'],
        ['request.reminder', reminded.id, null],
      ]),
    );
    const reminder = replay.events().find((e) => e.event === 'request.reminder')!;
    expect(reminder.data.payload.deadlineAt).toBe(reminded.deadline.at);
    expect(reminder.data.payload.secondsLeft).toBeGreaterThan(0);
    expect(reminder.data.payload.secondsLeft).toBeLessThan(50);

    const requests = await must('GET', `/chats/${chat.id}/requests?status=all`);
    const byId = new Map(requests.data.map((r: any) => [r.id, r]));
    const expired: any = byId.get(expiring.id);
    expect(expired.status).toBe('cancelled');
    // It fired at start: within a second or so of the runtime answering, not at the next sweep.
    expect(Date.parse(expired.expired_at) - up).toBeLessThan(1500);
    expect((byId.get(reminded.id) as any).status).toBe('pending');
    // Nothing twice: one closing, one reminder.
    await sleep(500);
    expect(replay.events().filter((e) => e.event === 'request.reminder')).toHaveLength(1);
    expect(replay.events().filter((e) => e.event === 'request.cancelled')).toHaveLength(1);
    replay.close();
  }, 90_000);
});
