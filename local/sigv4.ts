/**
 * Signature Version 4 as S3 checks it, for the local S3's front (local/s3.ts): a request signed
 * in its Authorization header (what the SDK sends), a presigned URL (its query), and a
 * browser-form POST policy. A failure is answered as S3 answers it: [status, code, message].
 *
 * Not checked: the body against a signed payload hash (S3's XAmzContentSHA256Mismatch), and
 * the chunk signatures of a streaming upload; the signed hash itself is part of the signature.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
}

export type Refusal = [status: number, code: string, message: string];

const ALGORITHM = 'AWS4-HMAC-SHA256';
/** How far a header-signed request's time may be from the server's (S3's RequestTimeTooSkewed). */
const MAX_SKEW_MS = 15 * 60 * 1000;
/** The longest a presigned URL may be valid (seven days). */
const MAX_EXPIRES_SECONDS = 604_800;

const hmac = (key: Buffer | string, data: string): Buffer => createHmac('sha256', key).update(data, 'utf8').digest();
const sha256 = (data: string): string => createHash('sha256').update(data, 'utf8').digest('hex');

/** The key of one day, region and service, derived from the secret. */
export function signingKey(secret: string, date: string, region: string, service: string): Buffer {
  return hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), service), 'aws4_request');
}

const sameHex = (a: string, b: string): boolean =>
  a.length === b.length && /^[0-9a-f]+$/.test(a) && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** `yyyyMMddTHHmmssZ` to milliseconds; NaN when it is not one. */
export function amzTime(value: string): number {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  return m ? Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!) : NaN;
}

/**
 * A credential scope `<key id>/<yyyyMMdd>/<region>/s3/aws4_request` of a request made at
 * `amzDate`: its signing key, or a refusal.
 */
function keyFor(credential: string, amzDate: string, credentials: Credentials): Buffer | Refusal {
  const parts = credential.split('/');
  if (parts.length !== 5 || parts[3] !== 's3' || parts[4] !== 'aws4_request' || !parts[2])
    return [400, 'AuthorizationQueryParametersError', 'Error parsing the X-Amz-Credential parameter.'];
  if (parts[0] !== credentials.accessKeyId)
    return [403, 'InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.'];
  if (parts[1] !== amzDate.slice(0, 8) || Number.isNaN(amzTime(amzDate)))
    return [
      403,
      'SignatureDoesNotMatch',
      'The request signature we calculated does not match the signature you provided.',
    ];
  return signingKey(credentials.secretAccessKey, parts[1], parts[2], 's3');
}

/** RFC 3986 unreserved characters stay; everything else is %XX (upper case), as SigV4 encodes. */
export const encode = (value: string): string =>
  encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

function decode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** The query's parameters, decoded, in order (a `+` is a plus, as S3 reads it). */
export function queryPairs(rawQuery: string): [string, string][] {
  if (rawQuery === '') return [];
  return rawQuery.split('&').map((pair) => {
    const eq = pair.indexOf('=');
    return eq < 0 ? [decode(pair), ''] : [decode(pair.slice(0, eq)), decode(pair.slice(eq + 1))];
  });
}

export function canonicalQuery(pairs: [string, string][]): string {
  return pairs
    .map(([k, v]) => [encode(k), encode(v)] as const)
    .sort(([ak, av], [bk, bv]) => (ak < bk ? -1 : ak > bk ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
}

export function canonicalHeaders(headers: IncomingHttpHeaders, signed: string[]): string | undefined {
  let out = '';
  for (const name of signed) {
    const value = headers[name];
    if (value === undefined) return undefined;
    const text = (Array.isArray(value) ? value.join(',') : value).trim().replace(/\s+/g, ' ');
    out += `${name}:${text}\n`;
  }
  return out;
}

const mismatch: Refusal = [
  403,
  'SignatureDoesNotMatch',
  'The request signature we calculated does not match the signature you provided. Check your key and signing method.',
];

/**
 * Checks a request's SigV4 signature, in its Authorization header or its query (presigned),
 * and its time: undefined when S3 would take it.
 */
export function verifyRequest(
  method: string,
  url: string,
  headers: IncomingHttpHeaders,
  credentials: Credentials,
  now = Date.now(),
): Refusal | undefined {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const pairs = queryPairs(q < 0 ? '' : url.slice(q + 1));
  const param = (name: string) => pairs.find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
  const authorization = headers.authorization;
  let credential: string, signedHeaders: string, signature: string, amzDate: string, payload: string;
  let signedPairs = pairs;
  if (authorization !== undefined) {
    const m = /^AWS4-HMAC-SHA256 Credential=([^,\s]+),\s*SignedHeaders=([^,\s]+),\s*Signature=([0-9a-f]+)$/.exec(
      authorization.trim(),
    );
    if (!m) return [400, 'InvalidArgument', 'Unsupported Authorization Type'];
    [, credential, signedHeaders, signature] = m as unknown as [string, string, string, string];
    amzDate = String(headers['x-amz-date'] ?? '');
    payload = String(headers['x-amz-content-sha256'] ?? 'UNSIGNED-PAYLOAD');
    if (Math.abs(amzTime(amzDate) - now) > MAX_SKEW_MS)
      return [
        403,
        'RequestTimeTooSkewed',
        "The difference between the request time and the server's time is too large.",
      ];
  } else if (param('X-Amz-Signature') !== undefined) {
    if (param('X-Amz-Algorithm') !== ALGORITHM)
      return [400, 'AuthorizationQueryParametersError', 'X-Amz-Algorithm only supports "AWS4-HMAC-SHA256"'];
    credential = param('X-Amz-Credential') ?? '';
    signedHeaders = param('X-Amz-SignedHeaders') ?? '';
    signature = param('X-Amz-Signature') ?? '';
    amzDate = param('X-Amz-Date') ?? '';
    payload = param('X-Amz-Content-Sha256') ?? 'UNSIGNED-PAYLOAD';
    const expires = Number(param('X-Amz-Expires'));
    if (!Number.isInteger(expires) || expires < 1 || expires > MAX_EXPIRES_SECONDS)
      return [400, 'AuthorizationQueryParametersError', 'X-Amz-Expires must be from 1 to 604800 seconds.'];
    const signedAt = amzTime(amzDate);
    if (Number.isNaN(signedAt)) return mismatch;
    if (now > signedAt + expires * 1000) return [403, 'AccessDenied', 'Request has expired'];
    if (signedAt - now > MAX_SKEW_MS) return [403, 'AccessDenied', 'Request is not valid yet'];
    signedPairs = pairs.filter(([k]) => k !== 'X-Amz-Signature');
  } else {
    return [403, 'AccessDenied', 'Access Denied'];
  }
  const key = keyFor(credential, amzDate, credentials);
  if (!Buffer.isBuffer(key)) return key;
  const names = signedHeaders.split(';');
  if (!names.includes('host')) return mismatch;
  const canonical = canonicalHeaders(headers, names);
  if (canonical === undefined) return mismatch;
  const request = [method, path, canonicalQuery(signedPairs), canonical, signedHeaders, payload].join('\n');
  const scope = credential.split('/').slice(1).join('/');
  const expected = hmac(key, [ALGORITHM, amzDate, scope, sha256(request)].join('\n')).toString('hex');
  return sameHex(signature, expected) ? undefined : mismatch;
}

/** A form field by name, compared case-insensitively as S3 compares them. */
export const fieldOf = (fields: Record<string, string>, name: string): string | undefined =>
  fields[Object.keys(fields).find((k) => k.toLowerCase() === name.toLowerCase()) ?? '\0'];

/** A POST form's signature: the hex HMAC of its base64 Policy with the signing key of its credential. */
export function verifyPostSignature(fields: Record<string, string>, credentials: Credentials): Refusal | undefined {
  const policy = fieldOf(fields, 'Policy');
  const signature = fieldOf(fields, 'X-Amz-Signature');
  if (policy === undefined || signature === undefined)
    return [403, 'AccessDenied', 'Access Denied (a form upload needs Policy and X-Amz-Signature).'];
  if (fieldOf(fields, 'X-Amz-Algorithm') !== ALGORITHM)
    return [400, 'InvalidArgument', 'POST requires X-Amz-Algorithm AWS4-HMAC-SHA256.'];
  const key = keyFor(fieldOf(fields, 'X-Amz-Credential') ?? '', fieldOf(fields, 'X-Amz-Date') ?? '', credentials);
  if (!Buffer.isBuffer(key)) return key;
  return sameHex(signature, hmac(key, policy).toString('hex')) ? undefined : mismatch;
}

/**
 * The access key id a request is signed with (its Authorization header's or its presigned
 * query's credential), or undefined when it is not signed.
 */
export function signerKeyId(url: string, headers: IncomingHttpHeaders): string | undefined {
  const header = /Credential=([^/,\s]+)\//.exec(String(headers.authorization ?? ''));
  if (header) return header[1];
  const q = url.indexOf('?');
  const credential = queryPairs(q < 0 ? '' : url.slice(q + 1)).find(([k]) => k.toLowerCase() === 'x-amz-credential');
  return credential ? credential[1].split('/')[0] : undefined;
}
