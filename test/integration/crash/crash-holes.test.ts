/**
 * Holes a real crash leaves are decided once (issue 33 item 21). `npm start`'s runtime (local/run.ts,
 * with DynamoDB Local and the emulators: the whole process group; started without the launcher,
 * whose compiled trees a shared node_modules may prune under it) is killed with SIGKILL while 40
 * message creates run side by side, three times over, and restarted each time on the same
 * DATA_DIR, with the default hole grace (10 s). Then a replay from the first event is read twice:
 * the first decides every hole the crashes left (it voids them), so the second passes them at once
 * (under 3 s); both deliver every acknowledged message's event once, in order.
 *
 * What the crashes leave in the log is printed (the table read after the last stop): numbers the
 * counter handed out that hold neither an event nor a void.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { sequenceOf } from '../../../functions/store/events-repo.js';
import { Keys } from '../../../functions/store/keys.js';
import { LOCK_FILE } from '../../../local/data-lock.js';
import { startDynamo } from '../../../local/dynamo.js';
import { connect } from '../../support/sse.js';
import type { SseConnection } from '../../support/sse.js';
import { runtimeFolder, startRuntime } from '../../support/runtime.js';
import type { Runtime } from '../../support/runtime.js';

const ROUNDS = 3;
const PARALLEL = 40;

const { dir: dataDir, configPath } = runtimeFolder('chat-relay-crash-holes-');
const runtimeEnv = {
  DATA_DIR: dataDir,
  CONFIG_PATH: configPath,
  POWERTOOLS_LOG_LEVEL: 'SILENT',
  OPENGRAM_WRITE_RATE_LIMIT_MAX: '1000000',
};

let runtime: Runtime | undefined;
afterAll(async () => {
  await runtime?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/**
 * kill -9 of `npm start`: its runtime first (the process that holds the writers, named by the data
 * folder's lock), then its whole group (launcher, JVM). DynamoDB Local answers a write a moment
 * before its file has it, so it outlives the runtime by that moment (test/support/runtime.ts), as
 * DynamoDB keeps what it acknowledged when a function dies.
 */
async function killGroup(rt: Runtime): Promise<void> {
  const exited = new Promise<void>((ok) => {
    if (rt.process.exitCode !== null || rt.process.signalCode !== null) ok();
    else rt.process.once('exit', () => ok());
  });
  process.kill(Number(readFileSync(join(dataDir, LOCK_FILE), 'utf8')), 'SIGKILL');
  await new Promise((ok) => setTimeout(ok, 500));
  process.kill(-rt.process.pid!, 'SIGKILL');
  await exited;
  // Its JVM goes with the group; give the OS a moment to release its files and ports.
  await new Promise((ok) => setTimeout(ok, 300));
}

async function post(path: string, body: unknown): Promise<{ status: number; body: any } | undefined> {
  try {
    const res = await fetch(`${runtime!.url}/api/v1${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  } catch {
    return undefined;
  }
}

/** What the crashes left in the log: per number up to the counter, an event, a void or nothing. */
async function logShape(): Promise<{ last: number; events: number; voids: number; nothing: number[] }> {
  const dynamo = await startDynamo({ dataDir: join(dataDir, 'dynamodb') });
  const client = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      endpoint: dynamo.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    }),
  );
  try {
    const TableName = 'chat-relay';
    const counter = await client.send(new GetCommand({ TableName, Key: Keys.eventSequence, ConsistentRead: true }));
    const last = Number(counter.Item?.last ?? 0);
    const held = new Map<number, 'event' | 'void'>();
    let ExclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const out = await client.send(
        new QueryCommand({
          TableName,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': Keys.event(1).pk },
          ConsistentRead: true,
          ExclusiveStartKey,
        }),
      );
      for (const item of out.Items ?? []) held.set(Number(item.seq), item.void ? 'void' : 'event');
      ExclusiveStartKey = out.LastEvaluatedKey;
    } while (ExclusiveStartKey);
    const nothing: number[] = [];
    for (let seq = 1; seq <= last; seq++) if (!held.has(seq)) nothing.push(seq);
    const beyond = [...held.keys()].filter((seq) => seq > last);
    if (beyond.length > 0) console.log(`crash holes: numbers held beyond the counter (${last}): ${beyond.join(',')}`);
    return {
      last,
      events: [...held.values()].filter((h) => h === 'event').length,
      voids: [...held.values()].filter((h) => h === 'void').length,
      nothing,
    };
  } finally {
    client.destroy();
    await dynamo.stop();
  }
}

const messageIdsOf = (c: SseConnection) =>
  c
    .events()
    .filter((e) => e.event === 'message.created')
    .map((e) => String(e.data.payload.messageId));

describe('holes left by kill -9 of npm start', () => {
  it('are voided by the first replay, so the second replays them at once, none lost or twice', async () => {
    runtime = await startRuntime(runtimeEnv);
    const live = await connect(`${runtime.url}/api/v1/events/stream?ephemeral=false`);
    const chat = (await post('/chats', { agentIds: ['assistant'], modelId: 'm' }))!.body;
    await live.waitFor((c) => c.events().length >= 1, 15_000);
    const firstId = live.events()[0]!.id;
    live.close();

    const acknowledged = new Set<string>();
    const statuses: Record<string, number> = {};
    for (let round = 0; round < ROUNDS; round++) {
      let answered = 0;
      let killed: Promise<void> | undefined;
      const rt = runtime;
      await Promise.all(
        Array.from({ length: PARALLEL }, async (_, i) => {
          const res = await post(`/chats/${chat.id}/messages`, {
            role: 'agent',
            senderId: 'assistant',
            content: `round ${round} message ${i}`,
          });
          const status = String(res?.status ?? 'none');
          statuses[status] = (statuses[status] ?? 0) + 1;
          if (res && res.status === 201 && !killed) {
            acknowledged.add(res.body.id);
            if (++answered >= PARALLEL / 2) killed = killGroup(rt);
          }
        }),
      );
      await (killed ?? killGroup(rt));
      if (round === ROUNDS - 1) {
        const shape = await logShape();
        console.log(
          `crash holes: after ${ROUNDS} rounds (answers ${JSON.stringify(statuses)}): counter ${shape.last}, ` +
            `${shape.events} events, ${shape.voids} voids, ${shape.nothing.length} numbers holding nothing: ` +
            `${JSON.stringify(shape.nothing)}`,
        );
      }
      runtime = await startRuntime(runtimeEnv);
    }

    const replay = async () => {
      const began = Date.now();
      const c = await connect(`${runtime!.url}/api/v1/events/stream?ephemeral=false&cursor=${firstId}`);
      await c
        .waitFor((x) => [...acknowledged].every((id) => messageIdsOf(x).includes(id)), 40_000)
        .catch(() => undefined);
      const ms = Date.now() - began;
      const missing = [...acknowledged].filter((id) => !messageIdsOf(c).includes(id));
      if (missing.length > 0) console.log(`crash holes: a replay lacks ${missing.length} acknowledged: ${missing}`);
      c.close();
      return { ms, c };
    };
    const first = await replay();
    const second = await replay();
    console.log(
      `crash holes: ${acknowledged.size} acknowledged creates over ${ROUNDS} crashes; ` +
        `replay from the first event: ${first.ms} ms, then ${second.ms} ms`,
    );
    for (const { c } of [first, second]) {
      const ids = messageIdsOf(c);
      // None lost, none twice, in sequence order.
      expect([...acknowledged].filter((id) => !ids.includes(id))).toEqual([]);
      expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
      const seqs = c.events().map((e) => sequenceOf(e.id)!);
      expect(seqs.filter((n, i) => i > 0 && n <= seqs[i - 1]!)).toEqual([]);
    }
    // The same log, as far as both read (each stops once it has every acknowledged message).
    const common = Math.min(idsOfEvents(first.c).length, idsOfEvents(second.c).length);
    expect(idsOfEvents(second.c).slice(0, common)).toEqual(idsOfEvents(first.c).slice(0, common));
    expect(second.ms).toBeLessThan(3000);
    // The first did not wait out the 10 s grace either: the crashes' holes were settled at the restart.
    expect(first.ms).toBeLessThan(10_000);
  }, 420_000);
});

const idsOfEvents = (c: SseConnection) => c.events().map((e) => e.id);
