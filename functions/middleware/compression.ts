/**
 * The API's JSON answers, compressed when the request accepts it (`Accept-Encoding`): brotli at a
 * fast quality, else gzip. A page of 50 chats or 50 messages (~24 KB of JSON) goes as ~2 KB, for
 * a millisecond or two of the function's time (the chats bench on this loaded 2-core machine: +2.8 ms
 * p50), against ~22 KB less on the wire: what a phone on a slow link waits for on each list.
 *
 * Here rather than at the edge: CloudFront compresses only what its cache policy may cache, and the
 * API's behaviors cache nothing (lib/constructs/edge.ts, compression off there, as the event stream
 * needs); they forward the viewer's `Accept-Encoding` (the origin request policy forwards every
 * viewer header) and pass the function's encoded body through, as API Gateway does with a base64
 * body. Hand-written rather than @middy/http-content-encoding: that one compresses every answer,
 * the smallest too (a chunk append's, three million a month), at brotli's slowest quality.
 *
 * Left as they are: answers under MIN_BYTES, bodies that are bytes already (media) and the event
 * stream (its route has no such middleware).
 */
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import type { HttpMiddleware, HttpRequest } from './types.js';
import { header } from './types.js';

/** Below this, an encoded body saves less than a packet: not worth the CPU. */
export const MIN_BYTES = 1024;
/** Brotli's quality 4: about gzip's speed, a smaller body (quality 11, its default, is ~20× slower). */
const BROTLI_QUALITY = 4;

export type Encoding = 'br' | 'gzip' | 'identity';

/** The best encoding an `Accept-Encoding` header accepts (q=0 refuses one). */
export function acceptedEncoding(value: string | undefined): Encoding {
  const accepted = new Set<string>();
  for (const part of (value ?? '').toLowerCase().split(',')) {
    const [name, ...params] = part.trim().split(';');
    const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)).find(Boolean);
    if (name && !(q && Number(q[1]) === 0)) accepted.add(name.trim());
  }
  if (accepted.has('br')) return 'br';
  if (accepted.has('gzip')) return 'gzip';
  return 'identity';
}

function encodeBody(body: Buffer, encoding: 'br' | 'gzip'): Buffer {
  return encoding === 'br'
    ? brotliCompressSync(body, { params: { [zlib.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } })
    : gzipSync(body, { level: 6 });
}

/** `vary` with `name` added (CORS may have set `Origin`). */
function varyWith(vary: string | undefined, name: string): string {
  const names = vary ? vary.split(/\s*,\s*/) : [];
  return names.some((n) => n.toLowerCase() === name.toLowerCase()) ? vary! : [...names, name].join(', ');
}

function compress(request: HttpRequest): void {
  const response = request.response;
  if (!response || typeof response.body !== 'string' || response.isBase64Encoded) return;
  const type = Object.entries(response.headers).find(([k]) => k.toLowerCase() === 'content-type')?.[1];
  if (!type || !/^application\/json\b/i.test(type)) return;
  const plain = Buffer.from(response.body, 'utf8');
  if (plain.length < MIN_BYTES) return;
  const headers = { ...response.headers, vary: varyWith(response.headers.vary, 'Accept-Encoding') };
  const encoding = acceptedEncoding(header(request.event, 'accept-encoding'));
  if (encoding === 'identity') {
    response.headers = headers;
    return;
  }
  const encoded = encodeBody(plain, encoding);
  response.headers = { ...headers, 'content-encoding': encoding };
  response.body = encoded.toString('base64');
  response.isBase64Encoded = true;
}

/** Compresses the final answer (its `after` runs last but the logger's and the request context's). */
export function compression(): HttpMiddleware {
  return { after: compress };
}
