/**
 * Issue 34 item 3: the rehearsal catches what it exists to catch. One copy of the synthesized
 * assembly loses a grant (POST /chats' role: the table's read-write statement), a variable
 * (GET /chats: TABLE_NAME) and a route (GET /chats/{chatId}); each fails as it would on AWS,
 * while the untouched routes keep working.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { startRehearsal } from '../../local/rehearse/rehearsal.js';
import type { Rehearsal } from '../../local/rehearse/rehearsal.js';
import { copyAssembly, removeGrant, removeRoute, removeVariable } from './support.js';

let rehearsal: Rehearsal;
let dir: string;

beforeAll(async () => {
  const assembly = process.env.REHEARSAL_ASSEMBLY;
  const endpoint = process.env.TEST_DYNAMODB_ENDPOINT;
  if (!assembly || !endpoint) throw new Error('Run through the rehearsal project (its global setup synthesizes).');
  dir = copyAssembly(assembly);
  removeGrant(dir, 'POST /api/v1/chats', 'dynamodb:PutItem');
  removeVariable(dir, 'GET /api/v1/chats', 'TABLE_NAME');
  removeRoute(dir, 'GET /api/v1/chats/{chatId}');
  rehearsal = await startRehearsal({
    assemblyDir: dir,
    dynamoEndpoint: endpoint,
    tableName: `faults-${randomUUID()}`,
    port: 0,
    inputs: { POWERTOOLS_LOG_LEVEL: 'SILENT' },
    log: () => undefined,
  });
});

afterAll(async () => {
  await rehearsal?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const call = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${rehearsal.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
};

describe('a changed assembly fails in the rehearsal as on AWS', () => {
  test('untouched routes answer', async () => {
    const health = await call('GET', '/api/v1/health');
    expect(health.status).toBe(200);
    expect(health.body.status).toBe('ok');
  });

  test('a missing grant: the write is denied by IAM (AccessDeniedException) and the route answers 500', async () => {
    const before = rehearsal.denials().length;
    const created = await call('POST', '/api/v1/chats', { agentIds: ['agent-default'], modelId: 'model-default' });
    expect(created.status).toBe(500);
    expect(created.body.error.code).toBe('INTERNAL_ERROR');
    const denied = rehearsal.denials().slice(before);
    expect(denied.length).toBeGreaterThan(0);
    expect(denied[0]!.action).toMatch(/^dynamodb:/);
    expect(denied[0]!.message).toMatch(/is not authorized to perform: dynamodb:\w+ on resource: arn:aws:dynamodb:/);
  });

  test('a missing variable: the function fails and the route answers 500', async () => {
    const listed = await call('GET', '/api/v1/chats');
    expect(listed.status).toBe(500);
  });

  test("a missing route: the catch-all's 404 answers instead", async () => {
    const got = await call('GET', '/api/v1/chats/some-chat-id');
    expect(got.status).toBe(404);
    expect(got.body.error.code).toBe('NOT_FOUND');
  });
});
