/**
 * The deployed stack's edge checks (middleware/origin-verify.ts): the event stream answers only
 * requests that came through CloudFront, and the write rate limit keys on the viewer's address
 * as CloudFront reports it only on such requests (middleware/rate-limit.ts clientOf). The value
 * CloudFront sends is the table's SECRET#ORIGIN_VERIFY item, read by the functions whose
 * STORED_SECRETS names it (store/secrets-repo.ts), here against DynamoDB Local.
 */
import { PassThrough } from 'node:stream';
import type { Writable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { clientOf, viewerAddressOf } from '../../../functions/middleware/rate-limit.js';
import { ORIGIN_VERIFY_HEADER, cameThroughEdge, edgeOnly } from '../../../functions/middleware/origin-verify.js';
import { ddb } from '../../../functions/store/db.js';
import { Keys } from '../../../functions/store/keys.js';
import { setStoredSecretTtlForTests } from '../../../functions/store/secrets-repo.js';
import { installAwsLambdaGlobal } from '../../../local/stream-adapter.js';
import { useApi } from '../../support/api.js';

const SECRET = 'edge-secret-0123456789abcdef';
const api = useApi();

const event = (headers: Record<string, string>, sourceIp = '130.176.1.1') =>
  ({ headers, requestContext: { http: { method: 'GET', sourceIp } } }) as unknown as APIGatewayProxyEventV2;

const putSecret = (value: string) =>
  ddb().send(
    new PutCommand({
      TableName: api.tableName,
      Item: { ...Keys.generatedSecret('ORIGIN_VERIFY'), type: 'secret', value },
    }),
  );
const removeSecret = () =>
  ddb().send(new DeleteCommand({ TableName: api.tableName, Key: Keys.generatedSecret('ORIGIN_VERIFY') }));

/** A deployed edge function (STORED_SECRETS names ORIGIN_VERIFY), or the local runtime (none). */
function useEnv(vars: { STORED_SECRETS?: string | undefined }) {
  api.setEnv(vars);
  setStoredSecretTtlForTests(0);
}

beforeAll(async () => {
  installAwsLambdaGlobal();
  await putSecret(SECRET);
});
afterAll(() => {
  api.setEnv({ STORED_SECRETS: undefined });
  setStoredSecretTtlForTests();
});

describe("CloudFront's viewer address", () => {
  it('is the address without the source port, IPv4 and IPv6', () => {
    expect(viewerAddressOf('198.51.100.10:46532')).toBe('198.51.100.10');
    expect(viewerAddressOf('2001:db8::8a2e:370:7334:46532')).toBe('2001:db8::8a2e:370:7334');
    expect(viewerAddressOf('[2001:db8::1]:443')).toBe('2001:db8::1');
  });
  it('is nothing for a value without a port, blank or unknown', () => {
    for (const value of ['198.51.100.10', '', ' ', 'unknown', ':443', 'a:b', undefined]) {
      expect([value, viewerAddressOf(value)]).toEqual([value, undefined]);
    }
  });
});

describe('write rate limit client behind CloudFront', () => {
  beforeEach(() => useEnv({ STORED_SECRETS: 'ORIGIN_VERIFY' }));

  it("keys on the viewer's address when the request carries the origin-verify secret", async () => {
    const through = event({ 'cloudfront-viewer-address': '198.51.100.10:46532', [ORIGIN_VERIFY_HEADER]: SECRET });
    expect(await clientOf(through, false)).toBe('198.51.100.10');
  });

  it('ignores a viewer address sent straight to the API (no secret, or a wrong one): the source IP', async () => {
    const direct = event({ 'cloudfront-viewer-address': '198.51.100.10:46532' }, '203.0.113.7');
    expect(await clientOf(direct, false)).toBe('203.0.113.7');
    const forged = event(
      { 'cloudfront-viewer-address': '198.51.100.10:46532', [ORIGIN_VERIFY_HEADER]: `${SECRET}x` },
      '203.0.113.7',
    );
    expect(await clientOf(forged, true)).toBe('203.0.113.7');
  });

  it('falls back to the source IP when CloudFront reports no usable address', async () => {
    const through = event({ 'cloudfront-viewer-address': 'unknown', [ORIGIN_VERIFY_HEADER]: SECRET });
    expect(await clientOf(through, false)).toBe('130.176.1.1');
  });

  it('falls back to the source IP when the secret cannot be read (no 500 for a rate-limit key)', async () => {
    // Its item is missing: a broken deployment, never a pass.
    await removeSecret();
    try {
      const through = event({ 'cloudfront-viewer-address': '198.51.100.10:46532', [ORIGIN_VERIFY_HEADER]: SECRET });
      expect(await clientOf(through, false)).toBe('130.176.1.1');
    } finally {
      await putSecret(SECRET);
    }
  });

  it('reads a value the owner put in the item once its cache expires', async () => {
    await putSecret('rotated-edge-secret-987654321');
    try {
      const old = event({ 'cloudfront-viewer-address': '198.51.100.10:46532', [ORIGIN_VERIFY_HEADER]: SECRET });
      const rotated = event({
        'cloudfront-viewer-address': '198.51.100.10:46532',
        [ORIGIN_VERIFY_HEADER]: 'rotated-edge-secret-987654321',
      });
      expect(await clientOf(old, false)).toBe('130.176.1.1');
      expect(await clientOf(rotated, false)).toBe('198.51.100.10');
    } finally {
      await putSecret(SECRET);
    }
  });

  it('without an origin-verify secret (local runtime) never believes the header', async () => {
    useEnv({ STORED_SECRETS: undefined });
    const spoofed = event({ 'cloudfront-viewer-address': '198.51.100.10:46532', [ORIGIN_VERIFY_HEADER]: SECRET });
    expect(await clientOf(spoofed, false)).toBe('130.176.1.1');
    expect(await cameThroughEdge(spoofed)).toBe(false);
  });
});

describe('event stream behind CloudFront (edgeOnly)', () => {
  interface Captured {
    statusCode?: number;
    headers?: Record<string, string>;
    body: string;
    innerRan: boolean;
  }

  async function run(headers: Record<string, string>): Promise<Captured> {
    const captured: Captured = { body: '', innerRan: false };
    const lambda = (globalThis as unknown as { awslambda: Record<string, unknown> }).awslambda;
    const original = lambda.HttpResponseStream;
    lambda.HttpResponseStream = {
      from(stream: Writable, metadata: { statusCode?: number; headers?: Record<string, string> }) {
        captured.statusCode = metadata.statusCode;
        captured.headers = metadata.headers;
        return stream;
      },
    };
    try {
      const sink = new PassThrough();
      sink.on('data', (chunk: Buffer) => (captured.body += chunk.toString()));
      const handler = edgeOnly(async (_event, stream) => {
        captured.innerRan = true;
        stream.end('inner');
      });
      await handler(event(headers), sink, {} as Context);
      return captured;
    } finally {
      lambda.HttpResponseStream = original;
    }
  }

  it('answers a request without the secret with the 404 envelope before anything else runs', async () => {
    useEnv({ STORED_SECRETS: 'ORIGIN_VERIFY' });
    const attempts: Record<string, string>[] = [
      {},
      { [ORIGIN_VERIFY_HEADER]: 'guess' },
      { authorization: `Bearer ${SECRET}` },
    ];
    for (const headers of attempts) {
      const answer = await run(headers);
      expect(answer.innerRan).toBe(false);
      expect(answer.statusCode).toBe(404);
      expect(answer.headers?.['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(answer.body)).toEqual({ error: { code: 'NOT_FOUND', message: 'Not found.', details: null } });
    }
  });

  it('hands a request carrying the secret to the stream, Authorization untouched', async () => {
    useEnv({ STORED_SECRETS: 'ORIGIN_VERIFY' });
    const answer = await run({ [ORIGIN_VERIFY_HEADER]: SECRET, authorization: 'Bearer instance' });
    expect(answer).toMatchObject({ innerRan: true, body: 'inner' });
  });

  it('answers the 500 envelope, running nothing, when the secret cannot be read', async () => {
    useEnv({ STORED_SECRETS: 'ORIGIN_VERIFY' });
    await removeSecret();
    try {
      const answer = await run({ [ORIGIN_VERIFY_HEADER]: SECRET });
      expect(answer.innerRan).toBe(false);
      expect(answer.statusCode).toBe(500);
      expect(JSON.parse(answer.body)).toEqual({
        error: { code: 'INTERNAL_ERROR', message: 'Unexpected server error.', details: null },
      });
    } finally {
      await putSecret(SECRET);
    }
  });

  it('runs the stream as is where no secret is configured (the local runtime)', async () => {
    useEnv({ STORED_SECRETS: undefined });
    expect(await run({})).toMatchObject({ innerRan: true, body: 'inner' });
  });
});
