/**
 * The access hook of the local S3 (local/s3.ts): who may sign requests, and what each signer may
 * do. Without a hook the front takes the one LOCAL_S3_CREDENTIALS of the process for everything;
 * the deployment rehearsal gives one (local/rehearse/iam/s3.ts) with each function's own keys and
 * its role's policies.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Credentials, Refusal } from './sigv4.js';

/** A request as its signer made it, for an access hook to authorize (path style: /<bucket>/<key>). */
export interface S3Request {
  accessKeyId: string;
  method: string;
  bucket: string;
  key: string;
  query: [string, string][];
  headers: IncomingHttpHeaders;
  authType: 'REST-HEADER' | 'REST-QUERY-STRING' | 'POST';
  /** The body of a DeleteObjects request (it names the keys), the only body read before the decision. */
  body?: Buffer;
}

/** Who may sign, and what each signer may do; without one, LOCAL_S3_CREDENTIALS may do anything. */
export interface S3Access {
  /** The secret of a key id; undefined for a key no one has. */
  secretOf(accessKeyId: string): string | undefined;
  authorize(request: S3Request): Promise<{ allowed: boolean; message: string }>;
}

export const UNKNOWN_KEY: Refusal = [
  403,
  'InvalidAccessKeyId',
  'The AWS Access Key Id you provided does not exist in our records.',
];

/** The credentials a request signed with `accessKeyId` is verified with; undefined for an unknown key. */
export function credentialsOf(
  accessKeyId: string | undefined,
  access: S3Access | undefined,
  fallback: Credentials,
): Credentials | undefined {
  if (!access) return fallback;
  const secret = accessKeyId === undefined ? undefined : access.secretOf(accessKeyId);
  return secret === undefined ? undefined : { accessKeyId: accessKeyId!, secretAccessKey: secret };
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function readAll(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** The signer's decision on a request, its body read first when the decision needs it (DeleteObjects). */
export async function authorized(
  hook: S3Access,
  accessKeyId: string,
  req: IncomingMessage,
  url: string,
  query: [string, string][],
): Promise<{ refusal?: Refusal; body?: Buffer }> {
  const [bucket = '', ...rest] = url.split('?')[0]!.split('/').slice(1).map(decodeSegment);
  const method = req.method ?? 'GET';
  const body = method === 'POST' && query.some(([k]) => k === 'delete') ? await readAll(req) : undefined;
  const authType = req.headers.authorization === undefined ? 'REST-QUERY-STRING' : 'REST-HEADER';
  const request = {
    accessKeyId,
    method,
    bucket,
    key: rest.join('/'),
    query,
    headers: req.headers,
    authType,
  } as const;
  const decision = await hook.authorize(body ? { ...request, body } : request);
  return decision.allowed ? { ...(body ? { body } : {}) } : { refusal: [403, 'AccessDenied', decision.message] };
}
