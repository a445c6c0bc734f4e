/**
 * The benchmark's web push part (issue 13), on the bench's own local runtime with push turned
 * on for its duration: 50 devices subscribe (real P-256 keys, so every payload is really
 * encrypted), then agent messages are posted one at a time and the time is taken from each
 * message's POST response to the first and to the last of its 50 push requests leaving (the
 * transport is a stand-in for the network that answers 201 after SERVICE_MS, as a push service
 * would; deliveries run 16 at a time, so the last request leaves only after earlier ones are
 * answered). Locally the notifier is fed by the event-log tail (a poll every 200 ms), in AWS by
 * the table's stream. The DynamoDB cost of one notification is measured by replaying the last
 * event (under a fresh id) through the notifier with usage counting on.
 */
import { createECDH, randomBytes } from 'node:crypto';
import { BENCH_CONFIG, BenchClient, CHATS } from './scenario.js';
import type { Failure, PhaseTiming } from './scenario.js';
import { percentile, textTable } from './stats.js';
import type { Sample } from './stats.js';

const DEVICES = 50;
const NOTIFICATIONS = 20;
const TEST_PUSHES = 5;
/** How long the stand-in push service takes to answer. */
const SERVICE_MS = 50;

export const PUSH_LABELS = {
  subscribe: 'POST /api/v1/push/subscribe',
  test: `POST /api/v1/push/test (${DEVICES} devices)`,
  unsubscribe: 'DELETE /api/v1/push/subscribe',
  chatCreate: `POST ${CHATS} (for push)`,
  message: `POST ${CHATS}/{chatId}/messages (agent, ${DEVICES} devices subscribed)`,
} as const;

export interface PushReport {
  devices: number;
  serviceMs: number;
  notifications: number;
  /** From an agent message's POST response to its first / last push request leaving (ms). */
  firstLeavingMs: { p50: number; p99: number };
  lastLeavingMs: { p50: number; p99: number };
  /** DynamoDB spend of one notification to all devices (as DynamoDB Local reports it). */
  perNotification: { calls: number; rcu: number; wcu: number };
}

export interface PushScenarioResult {
  samples: Sample[];
  failures: Failure[];
  missingUsage: string[];
  phases: PhaseTiming[];
  push: PushReport;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runPushScenarios(baseUrl: string, log: (line: string) => void): Promise<PushScenarioResult> {
  // Imported here, not at the top: function modules read the environment (log level,
  // table) when they load, and run.ts sets it up first.
  const Push = await import('../../functions/core/push.js');
  const { getConfig } = await import('../../functions/core/instance-config.js');
  const { reloadEnvForTests } = await import('../../functions/platform/env.js');
  const { withUsage } = await import('../../functions/platform/usage.js');
  const { setPushTransportForTests } = await import('../../functions/platform/web-push.js');
  const { currentSequence, getEvent } = await import('../../functions/store/events-repo.js');
  const client = new BenchClient(baseUrl);
  const phases: PhaseTiming[] = [];
  const leaving: number[] = [];
  setPushTransportForTests(async () => {
    leaving.push(performance.now());
    await sleep(SERVICE_MS);
    return 201;
  });
  const previousConfig = process.env.INSTANCE_CONFIG;
  process.env.INSTANCE_CONFIG = JSON.stringify({
    ...BENCH_CONFIG,
    push: { enabled: true, subject: 'mailto:bench@example.com' },
  });
  reloadEnvForTests();
  try {
    log(`push: ${DEVICES} devices subscribe`);
    let started = performance.now();
    const endpoints: string[] = [];
    for (let i = 0; i < DEVICES; i++) {
      const ecdh = createECDH('prime256v1');
      ecdh.generateKeys();
      const endpoint = `https://fcm.googleapis.com/fcm/send/bench-${i}-${randomBytes(4).toString('hex')}`;
      endpoints.push(endpoint);
      await client.request(PUSH_LABELS.subscribe, 'POST', '/api/v1/push/subscribe', {
        body: {
          endpoint,
          keys: { p256dh: ecdh.getPublicKey('base64url'), auth: randomBytes(16).toString('base64url') },
        },
        expect: 201,
      });
    }
    phases.push({ name: 'push subscribe', ms: performance.now() - started, requests: DEVICES });

    // Let the tail see push on (it starts at the log's head) before the first message.
    await sleep(600);
    const chat = await client.request<{ id: string }>(PUSH_LABELS.chatCreate, 'POST', CHATS, {
      body: { agentIds: ['assistant'], modelId: 'model-fast' },
      expect: 201,
    });
    log(`push: ${NOTIFICATIONS} agent messages, each to ${DEVICES} devices`);
    started = performance.now();
    const first: number[] = [];
    const last: number[] = [];
    for (let n = 0; n < NOTIFICATIONS; n++) {
      leaving.length = 0;
      await client.request(PUSH_LABELS.message, 'POST', `${CHATS}/${chat.body.id}/messages`, {
        body: { role: 'agent', senderId: 'assistant', content: `Update ${n}: the deploy finished.` },
        expect: 201,
      });
      const answered = performance.now();
      const deadline = answered + 10_000;
      while (leaving.length < DEVICES && performance.now() < deadline) await sleep(2);
      if (leaving.length < DEVICES) throw new Error(`push: only ${leaving.length} of ${DEVICES} requests left`);
      first.push(leaving[0]! - answered);
      last.push(leaving[DEVICES - 1]! - answered);
      // Every delivery answered before the next message.
      await sleep(SERVICE_MS + 20);
    }
    phases.push({ name: 'push notifications', ms: performance.now() - started, requests: NOTIFICATIONS });

    started = performance.now();
    for (let n = 0; n < TEST_PUSHES; n++) {
      await client.request(PUSH_LABELS.test, 'POST', '/api/v1/push/test', { body: {} });
    }
    phases.push({ name: 'push test', ms: performance.now() - started, requests: TEST_PUSHES });

    // One notification's DynamoDB spend: the last message's event again, under a fresh id.
    const event = await getEvent(await currentSequence());
    if (!event || event.type !== 'message.created') throw new Error('push: the last event is not the last message');
    const { usage, result } = withUsage(async () =>
      Push.notifyEvent({ ...event, id: `${event.id.slice(0, 9)}${'b'.repeat(12)}` }, await getConfig()),
    );
    const counts = await result;
    if (counts?.sent !== DEVICES) throw new Error(`push: the replayed notification reached ${counts?.sent ?? 0}`);

    for (const endpoint of endpoints) {
      await client.request(PUSH_LABELS.unsubscribe, 'DELETE', '/api/v1/push/subscribe', { body: { endpoint } });
    }
    const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
    const stat = (values: number[]) => ({ p50: percentile(sorted(values), 50), p99: percentile(sorted(values), 99) });
    return {
      samples: client.samples,
      failures: client.failures,
      missingUsage: [...client.missingUsage],
      phases,
      push: {
        devices: DEVICES,
        serviceMs: SERVICE_MS,
        notifications: NOTIFICATIONS,
        firstLeavingMs: stat(first),
        lastLeavingMs: stat(last),
        perNotification: { calls: usage.calls, rcu: usage.readUnits, wcu: usage.writeUnits },
      },
    };
  } finally {
    setPushTransportForTests(undefined);
    process.env.INSTANCE_CONFIG = previousConfig;
    reloadEnvForTests();
  }
}

export function pushTables(report: PushReport): string {
  const ms = (v: number) => v.toFixed(1);
  const rows = [
    ['first request leaves', ms(report.firstLeavingMs.p50), ms(report.firstLeavingMs.p99)],
    [`last (${report.devices}th) request leaves`, ms(report.lastLeavingMs.p50), ms(report.lastLeavingMs.p99)],
  ];
  const cost = report.perNotification;
  return (
    textTable(['from the message POST response', 'p50 ms', 'p99 ms'], rows) +
    `\nPer notification (${report.devices} devices): ${cost.calls} DynamoDB calls, ` +
    `${cost.rcu.toFixed(2)} RCU, ${cost.wcu.toFixed(2)} WCU (DynamoDB Local's report)`
  );
}
