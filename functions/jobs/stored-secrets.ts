/**
 * The stored secrets' custom resource, run by CloudFormation on deploy (lib/constructs/stored-secrets.ts):
 * it makes each secret the stack names (ResourceProperties.Secrets) unless the table already holds one,
 * with a conditional put, so a value the owner put in the item, or an earlier deploy's, is kept:
 * - INSTANCE: the instance secret (contract §1.11), 48 letters and digits;
 * - ORIGIN_VERIFY: the header value CloudFront adds to origin requests, 48 letters and digits;
 * - VAPID: the web push key pair (§7.7) as JSON `{ publicKey, privateKey }`, never remade while present.
 * Create and Update do the same (harmless on a second run); Delete keeps every item (the table is
 * retained with the data the secrets protect). Answers with the origin-verify value (CloudFront's
 * custom origin header) and the VAPID public key (every function's VAPID_PUBLIC_KEY), with NoEcho so
 * CloudFormation masks them and the provider framework's logs print asterisks.
 */
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { logger } from '../platform/logger.js';
import { generateVapidKeys } from '../platform/vapid-keys.js';
import { parseVapidPair } from '../platform/web-push.js';
import { STORED_SECRET_NAMES } from '../store/keys.js';
import type { StoredSecretName } from '../store/keys.js';
import { keepOrPut, randomAlphanumeric } from '../store/secrets-repo.js';

/** Letters and digits: a bearer token and a header value as is, far above the recommended 32. */
export const GENERATED_SECRET_LENGTH = 48;

const make: Record<StoredSecretName, () => string> = {
  INSTANCE: () => randomAlphanumeric(GENERATED_SECRET_LENGTH),
  ORIGIN_VERIFY: () => randomAlphanumeric(GENERATED_SECRET_LENGTH),
  VAPID: () => JSON.stringify(generateVapidKeys()),
};

export interface StoredSecretsResponse {
  PhysicalResourceId: string;
  NoEcho?: boolean;
  Data?: { OriginVerify?: string; VapidPublicKey?: string };
}

function requestedSecrets(event: CloudFormationCustomResourceEvent): StoredSecretName[] {
  const asked = (event.ResourceProperties as { Secrets?: unknown }).Secrets;
  const names = Array.isArray(asked) ? asked.map(String) : [];
  const unknown = names.filter((name) => !(STORED_SECRET_NAMES as readonly string[]).includes(name));
  if (unknown.length > 0) throw new Error(`Unknown stored secrets: ${unknown.join(', ')}`);
  return STORED_SECRET_NAMES.filter((name) => names.includes(name));
}

export async function handler(event: CloudFormationCustomResourceEvent): Promise<StoredSecretsResponse> {
  // Deleting the resource keeps the items: the table, and the clients configured with them, outlive it.
  if (event.RequestType === 'Delete') return { PhysicalResourceId: event.PhysicalResourceId };
  const data: NonNullable<StoredSecretsResponse['Data']> = {};
  for (const name of requestedSecrets(event)) {
    const { value, created } = await keepOrPut(name, make[name]());
    // Names only: a value never reaches a log.
    logger.info(created ? 'stored secret generated' : 'stored secret kept', { secret: name });
    if (name === 'ORIGIN_VERIFY') data.OriginVerify = value;
    if (name === 'VAPID') data.VapidPublicKey = parseVapidPair(value).publicKey;
  }
  return { PhysicalResourceId: 'stored-secrets', NoEcho: true, Data: data };
}
