/**
 * One runtime per data folder (issue 33 item 8). A second `npm start` on the DATA_DIR a running
 * instance holds refuses at once with a clear message and a non-zero exit, before it launches
 * anything, and the running instance goes on answering with its data intact. After a kill -9 of
 * the holder (its lock file left behind), a start on the folder works without any cleanup.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../../local/dynamo.js';
import { LOCK_FILE } from '../../../local/data-lock.js';
import { runtimeFolder, startRuntime } from '../../support/runtime.js';
import type { Runtime } from '../../support/runtime.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const { dir: dataDir, configPath } = runtimeFolder('chat-relay-lock-');
const env = { DATA_DIR: dataDir, CONFIG_PATH: configPath, POWERTOOLS_LOG_LEVEL: 'SILENT' };

let runtime: Runtime | undefined;
afterAll(async () => {
  await runtime?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** `npm start` (the launcher) on the folder, run to its end: its exit code and output. */
async function secondStart(): Promise<{ code: number | null; output: string; ms: number }> {
  const began = Date.now();
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env, PORT: String(await freePort()) };
  delete childEnv.NODE_OPTIONS;
  const child = spawn(process.execPath, ['--import', 'tsx', 'local/main.ts'], {
    cwd: ROOT,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const code = await new Promise<number | null>((ok) => child.once('exit', (c) => ok(c)));
  clearTimeout(timer);
  return { code, output, ms: Date.now() - began };
}

async function json(url: string, init?: RequestInit): Promise<{ status: number; body: any }> {
  const res = await fetch(url, init);
  return { status: res.status, body: await res.json() };
}

describe('one instance per data folder', () => {
  it('a second start refuses, the first is untouched; after a kill -9 a start works without cleanup', async () => {
    runtime = await startRuntime(env, 'local/main.ts');
    const created = await json(`${runtime.url}/api/v1/chats`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ agentIds: ['assistant'], modelId: 'm', title: 'kept' }),
    });
    expect(created.status).toBe(201);
    const lockPath = join(dataDir, LOCK_FILE);
    expect(existsSync(lockPath)).toBe(true);
    const holder = readFileSync(lockPath, 'utf8').trim();

    const second = await secondStart();
    expect(second.code).not.toBe(0);
    expect(second.output).toMatch(
      new RegExp(`another chat relay \\(pid ${holder}\\) is running on the data folder ${dataDir}`),
    );
    // It refused before launching anything (no DynamoDB Local of its own, no "ready").
    expect(second.output).not.toMatch(/DynamoDB Local up|listening on/);

    // The first instance answers as before, its data intact, and still holds the lock.
    expect((await json(`${runtime.url}/api/v1/health`)).status).toBe(200);
    const read = await json(`${runtime.url}/api/v1/chats/${created.body.id}`);
    expect([read.status, read.body.title]).toEqual([200, 'kept']);
    const write = await json(`${runtime.url}/api/v1/chats/${created.body.id}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ role: 'user', content: 'still writable' }),
    });
    expect(write.status).toBe(201);
    expect(readFileSync(lockPath, 'utf8').trim()).toBe(holder);

    // kill -9 of the whole group: the lock file stays behind, naming a dead process.
    const exited = new Promise<void>((ok) => runtime!.process.once('exit', () => ok()));
    process.kill(-runtime.process.pid!, 'SIGKILL');
    await exited;
    await new Promise((ok) => setTimeout(ok, 300));
    expect(readFileSync(lockPath, 'utf8').trim()).toBe(holder);

    runtime = await startRuntime(env, 'local/main.ts');
    expect((await json(`${runtime.url}/api/v1/health`)).status).toBe(200);
    const after = await json(`${runtime.url}/api/v1/chats/${created.body.id}`);
    expect([after.status, after.body.title]).toEqual([200, 'kept']);
    const restarted = readFileSync(lockPath, 'utf8').trim();
    expect(restarted).not.toBe(holder);

    // A clean stop releases the lock.
    await runtime.stop();
    runtime = undefined;
    expect(existsSync(lockPath)).toBe(false);
  }, 180_000);
});
