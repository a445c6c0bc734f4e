/**
 * The VAPID key pair's custom resource (contract §7.7), run by CloudFormation on deploy: it
 * makes the pair once, in the stack's secret, and keeps it on every later deploy (a new pair
 * would invalidate every browser subscription). Answers with the public key, which the stack
 * gives every function as VAPID_PUBLIC_KEY; the private key stays in the secret.
 */
import { GetSecretValueCommand, PutSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { CONTROL_PLANE_BUDGET, clientBudget } from '../platform/aws-clients.js';
import { requiredEnv } from '../platform/env.js';
import { logger } from '../platform/logger.js';
import { generateVapidKeys } from '../platform/vapid-keys.js';
import type { VapidKeyPair } from '../platform/web-push.js';

const client = new SecretsManagerClient(clientBudget(CONTROL_PLANE_BUDGET));

function storedPair(text: string | undefined): VapidKeyPair | undefined {
  try {
    const value = JSON.parse(text ?? '') as Partial<VapidKeyPair>;
    const publicKey = Buffer.from(value.publicKey ?? '', 'base64url');
    const privateKey = Buffer.from(value.privateKey ?? '', 'base64url');
    return publicKey.length === 65 && privateKey.length === 32 ? (value as VapidKeyPair) : undefined;
  } catch {
    return undefined;
  }
}

export async function handler(
  event: CloudFormationCustomResourceEvent,
): Promise<{ PhysicalResourceId: string; Data?: { PublicKey: string } }> {
  const secretId = requiredEnv('VAPID_SECRET_ARN');
  // Deleting the resource keeps the keys: the secret is retained with the stack's data.
  if (event.RequestType === 'Delete') return { PhysicalResourceId: event.PhysicalResourceId };
  const current = await client.send(new GetSecretValueCommand({ SecretId: secretId }));
  let pair = storedPair(current.SecretString);
  if (!pair) {
    pair = generateVapidKeys();
    await client.send(new PutSecretValueCommand({ SecretId: secretId, SecretString: JSON.stringify(pair) }));
    logger.info('VAPID key pair generated');
  }
  return { PhysicalResourceId: 'vapid-keys', Data: { PublicKey: pair.publicKey } };
}
