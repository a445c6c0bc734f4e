/**
 * `npm start` serves the built web app at `/` (every path outside /api), as the stack's
 * CloudFront distribution serves it from S3, by the rules of lib/web-policy.ts: a path naming no
 * file (an app route) gets index.html, any other path its file or 404; hashed files under
 * /assets/ are cached for a year, everything else revalidated (`no-cache`, with an ETag and 304);
 * every answer carries the security headers (CSP, HSTS, frame and sniffing rules, referrer policy).
 * Text files are compressed (brotli or gzip, as the browser accepts), once per file version.
 *
 * Beside another build (RELAY_WEB_DIR), the relay's sign-in page (/relay-sign-in.html, .js, .css)
 * is served from web/public when that build lacks it, by the same rules.
 *
 * A request's path is decoded and then checked segment by segment: `..`, `.`, a backslash or a
 * NUL byte anywhere is 404, and the file found must lie inside the app's folder, so nothing
 * outside it can be read (test/e2e/served-app.test.ts tries).
 */
import { readFile, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, resolve, sep } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlib, gzip } from 'node:zlib';
import {
  HASHED_ASSETS_PREFIX,
  HASHED_CACHE_CONTROL,
  SIGN_IN_FILES,
  UNHASHED_CACHE_CONTROL,
  isAppRoute,
} from '../lib/web-policy.js';
import { MIN_BYTES, acceptedEncoding } from '../functions/middleware/compression.js';

/** What `npm start` serves at `/`: a built app's folder, or why there is none (503). */
export interface WebApp {
  dir: string;
  /** Set when the app could not be built: every app path answers 503 with this text. */
  unavailable?: string;
  /**
   * Beside another build (RELAY_WEB_DIR): the folder of the relay's sign-in page, whose files
   * (lib/web-policy.ts SIGN_IN_FILES) are served from it when `dir` lacks them.
   */
  signInDir?: string;
  /**
   * Another build than ours (RELAY_WEB_DIR naming a folder other than web/dist): its pages get the
   * CSP of lib/web-policy.ts with inline styles allowed (`foreignBuild`), scripts as strict as ours.
   */
  foreign?: boolean;
}

/** Paths the API answers; everything else is the web app's (as CloudFront's `/api/*` behavior). */
export const isApiPath = (path: string): boolean => path === '/api' || path.startsWith('/api/');

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.xml': 'application/xml; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.otf': 'font/otf',
  '.wasm': 'application/wasm',
  '.mp3': 'audio/mpeg',
  '.mp4': 'video/mp4',
  '.webm': 'video/webm',
};

const contentTypeOf = (file: string) => CONTENT_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream';
const compressible = (type: string) => /^(text\/|application\/(json|manifest\+json|xml|wasm)|image\/svg)/.test(type);

interface FileVersion {
  key: string;
  body: Buffer;
  etag: string;
  encoded: Partial<Record<'br' | 'gzip', Promise<Buffer>>>;
}

/** The last version read of each file (the app's folder is small), with its compressed forms. */
const versions = new Map<string, FileVersion>();

async function readVersion(file: string): Promise<FileVersion | undefined> {
  let info;
  try {
    info = await stat(file);
  } catch {
    return undefined;
  }
  if (!info.isFile()) return undefined;
  const key = `${info.size}-${Math.floor(info.mtimeMs)}`;
  const known = versions.get(file);
  if (known?.key === key) return known;
  const version: FileVersion = {
    key,
    body: await readFile(file),
    etag: `"${info.size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}`,
    encoded: {},
  };
  versions.set(file, version);
  return version;
}

function encode(version: FileVersion, encoding: 'br' | 'gzip'): Promise<Buffer> {
  version.encoded[encoding] ??=
    encoding === 'br'
      ? promisify(brotliCompress)(version.body, { params: { [zlib.BROTLI_PARAM_QUALITY]: 9 } })
      : promisify(gzip)(version.body, { level: 9 });
  return version.encoded[encoding];
}

/** Whether an `If-None-Match` names this ETag (weak comparison, as for GET). */
function notModified(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

function answerText(
  req: IncomingMessage,
  res: ServerResponse,
  security: Readonly<Record<string, string>>,
  status: number,
  text: string,
  extra = {},
): void {
  const body = Buffer.from(`${text}\n`);
  res.writeHead(status, {
    ...security,
    'content-type': 'text/plain; charset=utf-8',
    'content-length': body.length,
    'cache-control': 'no-store',
    ...extra,
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** The file a request path names inside `dir`, or undefined when the path may not name one. */
function fileFor(dir: string, path: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return undefined;
  }
  const segments = decoded.split('/').slice(1);
  if (segments.some((s) => s === '..' || s === '.' || s.includes('\\') || s.includes('\0'))) return undefined;
  const root = resolve(dir);
  const file = resolve(join(root, ...segments));
  return file.startsWith(root + sep) ? file : undefined;
}

/**
 * Answers a request for a path outside /api from the app's folder (see the top of this file).
 * `headers`: the app's security headers (lib/web-policy.ts webSecurityHeaders), made once by the
 * caller for its media bucket's origin: `own` for our build, `foreign` for another (`app.foreign`).
 */
export async function serveWebApp(
  req: IncomingMessage,
  res: ServerResponse,
  app: WebApp,
  headers: { own: Readonly<Record<string, string>>; foreign: Readonly<Record<string, string>> },
): Promise<void> {
  const security = app.foreign ? headers.foreign : headers.own;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    return answerText(req, res, security, 405, 'Method not allowed.', { allow: 'GET, HEAD' });
  }
  if (app.unavailable) return answerText(req, res, security, 503, app.unavailable);
  const path = new URL(req.url ?? '/', 'http://local').pathname;
  let file = isAppRoute(path) ? join(resolve(app.dir), 'index.html') : fileFor(app.dir, path);
  let version = file && (await readVersion(file));
  const signInFile = SIGN_IN_FILES.find((name) => path === `/${name}`);
  if (!version && app.signInDir && signInFile) {
    file = join(resolve(app.signInDir), signInFile);
    version = await readVersion(file);
  }
  if (!file || !version) return answerText(req, res, security, 404, 'Not found.');
  const type = contentTypeOf(file);
  const canCompress = compressible(type) && version.body.length >= MIN_BYTES;
  const encoding = canCompress ? acceptedEncoding(req.headers['accept-encoding']) : 'identity';
  const etag = `${version.etag}${encoding === 'identity' ? '' : `-${encoding}`}"`;
  const answer: Record<string, string | number> = {
    ...security,
    'content-type': type,
    'cache-control':
      !isAppRoute(path) && path.startsWith(HASHED_ASSETS_PREFIX) ? HASHED_CACHE_CONTROL : UNHASHED_CACHE_CONTROL,
    etag,
    ...(canCompress ? { vary: 'Accept-Encoding' } : {}),
  };
  if (notModified(req.headers['if-none-match'], etag)) {
    res.writeHead(304, answer);
    res.end();
    return;
  }
  const body = encoding === 'identity' ? version.body : await encode(version, encoding);
  res.writeHead(200, {
    ...answer,
    ...(encoding === 'identity' ? {} : { 'content-encoding': encoding }),
    'content-length': body.length,
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}
