/**
 * Signature Version 4 of a JSON-protocol request (DynamoDB, SQS, Step Functions), signed in its
 * Authorization header as the SDK signs it: the key id names the principal, whose secret must
 * give the same signature over the method, path, query, signed headers and the body's hash.
 * The answer is the principal's key id, or the fault AWS would name (denied.ts words it).
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { amzTime, canonicalHeaders, canonicalQuery, encode, queryPairs, signingKey } from '../../sigv4.js';

export type SignatureFault = 'missing' | 'unknown-key' | 'bad-signature' | 'expired' | 'wrong-scope';

/** How far a request's time may be from the server's (AWS: 15 minutes). */
const MAX_SKEW_MS = 15 * 60 * 1000;
const AUTHORIZATION = /^AWS4-HMAC-SHA256 Credential=([^,\s]+),\s*SignedHeaders=([^,\s]+),\s*Signature=([0-9a-f]+)$/;

/** Signing keys by secret, day, region and service: deriving one is four HMACs, and a day has one per principal. */
const keys = new Map<string, Buffer>();
function keyOf(secret: string, date: string, region: string, service: string): Buffer {
  const id = `${secret}\0${date}\0${region}\0${service}`;
  let key = keys.get(id);
  if (!key) {
    if (keys.size > 1_000) keys.clear();
    key = signingKey(secret, date, region, service);
    keys.set(id, key);
  }
  return key;
}

const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

/** The canonical URI of a service other than S3: each segment of the (already escaped) path escaped again. */
function canonicalPath(path: string): string {
  return path === '' ? '/' : path.split('/').map(encode).join('/');
}

export function verifyServiceSignature(
  service: string,
  method: string,
  url: string,
  headers: IncomingHttpHeaders,
  body: Buffer,
  secretOf: (accessKeyId: string) => string | undefined,
  now = Date.now(),
): { accessKeyId: string } | { fault: SignatureFault } {
  const m = AUTHORIZATION.exec(String(headers.authorization ?? '').trim());
  if (!m) return { fault: 'missing' };
  const [, credential, signedHeaders, signature] = m as unknown as [string, string, string, string];
  const [accessKeyId = '', date = '', region = '', scopeService = '', terminator = ''] = credential.split('/');
  const secret = secretOf(accessKeyId);
  if (secret === undefined) return { fault: 'unknown-key' };
  if (scopeService !== service || terminator !== 'aws4_request') return { fault: 'wrong-scope' };
  const amzDate = String(headers['x-amz-date'] ?? '');
  const signedAt = amzTime(amzDate);
  if (Number.isNaN(signedAt) || amzDate.slice(0, 8) !== date) return { fault: 'bad-signature' };
  if (Math.abs(signedAt - now) > MAX_SKEW_MS) return { fault: 'expired' };
  const names = signedHeaders.split(';');
  const canonical = canonicalHeaders(headers, names);
  if (!names.includes('host') || canonical === undefined) return { fault: 'bad-signature' };
  const q = url.indexOf('?');
  const payload = String(headers['x-amz-content-sha256'] ?? sha256(body));
  const request = [
    method,
    canonicalPath(q < 0 ? url : url.slice(0, q)),
    canonicalQuery(queryPairs(q < 0 ? '' : url.slice(q + 1))),
    canonical,
    signedHeaders,
    payload,
  ].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const key = keyOf(secret, date, region, service);
  const expected = createHmac('sha256', key)
    .update(['AWS4-HMAC-SHA256', amzDate, scope, sha256(request)].join('\n'))
    .digest('hex');
  const same = signature.length === expected.length && timingSafeEqual(Buffer.from(signature), Buffer.from(expected));
  return same ? { accessKeyId } : { fault: 'bad-signature' };
}
