/**
 * The VAPID key pair of a deployed stack (contract §7.7): kept in the table's SECRET#VAPID item,
 * made once by the stored-secrets custom resource (functions/jobs/stored-secrets.ts), and read
 * from there by the push senders (STORED_SECRETS names VAPID; core/push-keys.ts), not from the
 * local runtime's key file. Every push is signed with the stored private key.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createPublicKey, verify } from 'node:crypto';
import { rmSync } from 'node:fs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { handler as makeSecrets } from '../../../functions/jobs/stored-secrets.js';
import { parseVapidPair } from '../../../functions/platform/web-push.js';
import { ddb } from '../../../functions/store/db.js';
import { Keys } from '../../../functions/store/keys.js';
import { setStoredSecretTtlForTests } from '../../../functions/store/secrets-repo.js';
import { useApi } from '../../support/api.js';
import { newDevice, recordPushes } from './support.js';
import type { Recorder } from './support.js';

const config = { push: { enabled: true, subject: 'mailto:ops@example.com' } };
let pushes: Recorder;
let publicKey: string;
const api = useApi(() => {
  pushes = recordPushes();
  return { config };
});
beforeAll(async () => {
  // As a deploy does: the custom resource makes the pair, and the stack gives its public key to every function.
  const create = {
    RequestType: 'Create',
    ServiceToken: 'provider',
    ResponseURL: 'https://cloudformation.example/response',
    StackId: 'arn:aws:cloudformation:us-east-1:123456789012:stack/ChatRelay/1',
    RequestId: 'r1',
    LogicalResourceId: 'Secrets',
    ResourceType: 'Custom::StoredSecrets',
    ResourceProperties: { ServiceToken: 'provider', Secrets: ['VAPID'] },
  } as CloudFormationCustomResourceEvent;
  publicKey = (await makeSecrets(create)).Data!.VapidPublicKey!;
  // The local runtime's key file is gone: the sender can only use the table's item.
  rmSync(process.env.VAPID_KEYS_FILE!, { force: true });
  api.setEnv({ STORED_SECRETS: 'VAPID', VAPID_KEYS_FILE: undefined, VAPID_PUBLIC_KEY: publicKey });
  setStoredSecretTtlForTests(0);
});
afterAll(() => {
  setStoredSecretTtlForTests();
});

/** Verifies a VAPID JWT (ES256) against a raw P-256 public key, as a push service does. */
function signedBy(authorization: string, rawPublicKey: string): boolean {
  const [, token, k] = /^vapid t=([^,]+), k=(.+)$/.exec(authorization) ?? [];
  if (!token || !k) return false;
  const point = Buffer.from(rawPublicKey, 'base64url');
  const key = createPublicKey({
    key: {
      kty: 'EC',
      crv: 'P-256',
      x: point.subarray(1, 33).toString('base64url'),
      y: point.subarray(33, 65).toString('base64url'),
    },
    format: 'jwk',
  });
  const [header, claims, signature] = token.split('.');
  return (
    k === rawPublicKey &&
    verify(
      'sha256',
      Buffer.from(`${header}.${claims}`),
      { key, dsaEncoding: 'ieee-p1363' },
      Buffer.from(signature!, 'base64url'),
    )
  );
}

describe('VAPID key pair from the table', () => {
  it('is what GET /config shows (public half) and what the push sender signs with', async () => {
    const stored = await ddb().send(
      new GetCommand({ TableName: api.tableName, Key: Keys.generatedSecret('VAPID'), ConsistentRead: true }),
    );
    const pair = parseVapidPair(stored.Item!.value as string);
    expect(pair.publicKey).toBe(publicKey);
    const shown = await api.get('/api/v1/config');
    expect(shown.body.push.vapidPublicKey).toBe(publicKey);
    expect(shown.text).not.toContain(pair.privateKey);

    const device = newDevice();
    expect((await api.post('/api/v1/push/subscribe', { endpoint: device.endpoint, keys: device.keys })).status).toBe(
      201,
    );
    expect((await api.post('/api/v1/push/test', {})).body).toMatchObject({ sent: 1 });
    const request = pushes.requests.at(-1)!;
    expect(signedBy(request.headers.authorization!, pair.publicKey)).toBe(true);
  });

  it('fails the send (never an unsigned push) when the item is missing', async () => {
    const { DeleteCommand, PutCommand } = await import('@aws-sdk/lib-dynamodb');
    const key = Keys.generatedSecret('VAPID');
    const kept = await ddb().send(new GetCommand({ TableName: api.tableName, Key: key, ConsistentRead: true }));
    await ddb().send(new DeleteCommand({ TableName: api.tableName, Key: key }));
    const before = pushes.requests.length;
    try {
      const res = await api.post('/api/v1/push/test', {});
      expect(res.status).toBe(500);
      expect(res.body.error.code).toBe('INTERNAL_ERROR');
      expect(pushes.requests.length).toBe(before);
    } finally {
      await ddb().send(new PutCommand({ TableName: api.tableName, Item: kept.Item! }));
    }
  });
});
