/**
 * `npm start` on a DynamoDB Local that is already running (DYNAMODB_ENDPOINT, local/run.ts), in
 * the table TABLE_NAME: the browser tests run every instance so, on their run's one JVM. It
 * launches no JVM of its own, keeps its data in that table (a restart on it finds what the first
 * run wrote, and settles the event numbers the first run handed out before serving), and refuses
 * an endpoint off this machine before touching anything.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { runtimeFolder, startRuntime } from '../../support/runtime.js';
import type { Runtime } from '../../support/runtime.js';

const endpoint = process.env.TEST_DYNAMODB_ENDPOINT!;
const tableName = `running-${randomBytes(6).toString('hex')}`;
const { dir: dataDir, configPath } = runtimeFolder('chat-relay-running-dynamo-');
const env = {
  DATA_DIR: join(dataDir, 'data'),
  CONFIG_PATH: configPath,
  POWERTOOLS_LOG_LEVEL: 'SILENT',
  DYNAMODB_ENDPOINT: endpoint,
  TABLE_NAME: tableName,
};
const runtimes: Runtime[] = [];

afterAll(async () => {
  await Promise.all(runtimes.map((r) => r.stop()));
  rmSync(dataDir, { recursive: true, force: true });
});

/** The command names of a process group's members (the launcher, the runtime, a JVM if any). */
function groupCommands(group: number): string[] {
  const commands: string[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      if (Number(stat.slice(close + 2).split(' ')[2]) === group)
        commands.push(stat.slice(stat.indexOf('(') + 1, close));
    } catch {
      // Gone meanwhile.
    }
  }
  return commands;
}

const json = async (url: string, init?: RequestInit) => {
  const res = await fetch(url, init);
  return { status: res.status, body: (await res.json()) as any };
};

describe('npm start with DYNAMODB_ENDPOINT', () => {
  it('uses that DynamoDB Local and table, launches no JVM, and a restart finds its data', async () => {
    const first = await startRuntime(env, 'local/main.ts');
    runtimes.push(first);
    expect(groupCommands(first.process.pid!)).not.toContain('java');
    const client = new DynamoDBClient({
      endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    try {
      const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
      expect(Table?.TableStatus).toBe('ACTIVE');
    } finally {
      client.destroy();
    }
    const created = await json(`${first.url}/api/v1/chats`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ agentIds: ['assistant'], modelId: 'm', title: 'kept in the running table' }),
    });
    expect(created.status).toBe(201);
    await first.stop();

    // The restart takes the table as found: it settles the event numbers first (local/run.ts
    // afterTable), which reads the handlers' environment, so it must come after the local API set it.
    const second = await startRuntime(env, 'local/main.ts');
    runtimes.push(second);
    const listed = await json(`${second.url}/api/v1/chats`);
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((c: { id: string }) => c.id)).toEqual([created.body.id]);
  }, 90_000);

  it('refuses an endpoint off this machine, saying so', async () => {
    const other = join(dataDir, 'other-data');
    await expect(
      startRuntime({ ...env, DATA_DIR: other, DYNAMODB_ENDPOINT: 'http://dynamodb.example.com:8000' }, 'local/main.ts'),
    ).rejects.toThrow(/DYNAMODB_ENDPOINT must be a DynamoDB Local on this machine \(127\.0\.0\.1\)/);
  }, 60_000);
});
