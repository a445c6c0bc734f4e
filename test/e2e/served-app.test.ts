/**
 * `npm start` serves the built web app at `/` by the rules of lib/web-policy.ts (issue 26 item 3):
 * app routes get index.html, hashed assets are immutable, everything else is revalidated, every
 * answer carries the security headers, nothing outside the app's folder can be read, /api stays
 * the API's. And the instance secret appears in no served file and no response (item 5): the
 * server runs with a known secret, and every file of the built app and a set of API answers made
 * with the session cookie are searched for it.
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync, readdirSync } from 'node:fs';
import { request } from 'node:http';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import {
  HASHED_CACHE_CONTROL,
  SIGN_IN_FILES,
  SIGN_IN_SOURCE_DIR,
  UNHASHED_CACHE_CONTROL,
  WEB_BUILD_DIR,
} from '../../lib/web-policy.js';
import { expectWebSecurityHeaders } from './support/headers.js';
import { seedChat, signInCookie, useRelay } from './support/relay.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DIST = join(ROOT, WEB_BUILD_DIR);

// `npm start` exactly as it ships: its own DynamoDB Local, its data in its data folder.
const relay = useRelay({ ownDynamo: true });

/** A request sent as written (fetch would normalize `..` away): status, headers, body. */
function raw(
  method: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  const { hostname, port } = new URL(relay.url);
  return new Promise((ok, fail) => {
    const req = request({ host: hostname, port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => ok({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', fail);
    });
    req.on('error', fail);
    req.end();
  });
}

/** Every file of the built app, as URL paths (index.html included). */
function builtFiles(): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(dir, entry.name));
      else files.push(`/${relative(DIST, join(dir, entry.name)).split('\\').join('/')}`);
    }
  };
  walk(DIST);
  return files.sort();
}

const expectSecurityHeaders = (headers: Record<string, string | string[] | undefined>) =>
  expectWebSecurityHeaders(headers, relay.url);

describe('the web app served by npm start', () => {
  it('/ and app routes answer index.html with the CSP, the other security headers and no-cache', async () => {
    const index = readFileSync(join(DIST, 'index.html'));
    for (const path of ['/', '/chats/abc', '/archived', '/new', '/sign-in', '/chats/abc/', '/some/deep/route']) {
      const res = await raw('GET', path);
      expect([path, res.status]).toEqual([path, 200]);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control']).toBe(UNHASHED_CACHE_CONTROL);
      expect(res.body.equals(index)).toBe(true);
      expectSecurityHeaders(res.headers);
    }
  });

  it('hashed files under /assets/ are immutable, with their content type; compressed as accepted, same bytes', async () => {
    const assets = builtFiles().filter((f) => f.startsWith('/assets/'));
    expect(assets.some((f) => f.endsWith('.js'))).toBe(true);
    for (const path of assets) {
      const bytes = readFileSync(join(DIST, path));
      const plain = await raw('GET', path);
      expect([path, plain.status]).toEqual([path, 200]);
      expect(plain.headers['cache-control']).toBe(HASHED_CACHE_CONTROL);
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.body.equals(bytes)).toBe(true);
      expectSecurityHeaders(plain.headers);
      if (path.endsWith('.js')) expect(plain.headers['content-type']).toBe('text/javascript; charset=utf-8');
      if (path.endsWith('.css')) expect(plain.headers['content-type']).toBe('text/css; charset=utf-8');
      if (!/\.(js|css|svg|json)$/.test(path) || bytes.length < 1024) continue;
      const br = await raw('GET', path, { 'accept-encoding': 'gzip, deflate, br' });
      expect(br.headers['content-encoding']).toBe('br');
      expect(br.headers.vary).toBe('Accept-Encoding');
      expect(brotliDecompressSync(br.body).equals(bytes)).toBe(true);
      const gz = await raw('GET', path, { 'accept-encoding': 'gzip, br;q=0' });
      expect(gz.headers['content-encoding']).toBe('gzip');
      expect(gunzipSync(gz.body).equals(bytes)).toBe(true);
    }
  });

  it('our build serves the standalone sign-in page (copied from web/public) as every unhashed file', async () => {
    for (const name of SIGN_IN_FILES) {
      const res = await raw('GET', `/${name}`, { 'accept-encoding': 'identity' });
      expect([name, res.status]).toEqual([name, 200]);
      expect(res.body.equals(readFileSync(join(ROOT, SIGN_IN_SOURCE_DIR, name)))).toBe(true);
      expect(res.headers['cache-control']).toBe(UNHASHED_CACHE_CONTROL);
      expectSecurityHeaders(res.headers);
    }
  });

  it('an unchanged file is 304 to a conditional GET with its ETag', async () => {
    const first = await raw('GET', '/');
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^".+"$/);
    const again = await raw('GET', '/chats/abc', { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    expect(again.headers['cache-control']).toBe(UNHASHED_CACHE_CONTROL);
    expect((await raw('GET', '/', { 'if-none-match': '"other"' })).status).toBe(200);
  });

  it('a missing file with an extension is 404 (no index.html), with the security headers', async () => {
    for (const path of ['/nope.js', '/assets/nope-0000.js', '/favicon-missing.ico', '/chats/abc.txt']) {
      const res = await raw('GET', path);
      expect([path, res.status]).toEqual([path, 404]);
      expect(res.body.toString()).not.toContain('<html');
      expectSecurityHeaders(res.headers);
    }
  });

  it('nothing outside the app folder can be read: encoded and raw `..`, backslashes, NUL', async () => {
    const packageJson = readFileSync(join(ROOT, 'package.json'), 'utf8');
    const probes = [
      '/..%2f..%2fpackage.json',
      '/assets/../../package.json',
      '/assets/..%2f..%2fpackage.json',
      '/%2e%2e/%2e%2e/package.json',
      '/assets/%2e%2e%2f%2e%2e%2fpackage.json',
      '/..%5c..%5cpackage.json',
      '/assets%2f..%2f..%2fpackage.json',
      '/..%252f..%252fpackage.json',
      '/index.html%00.js',
      '/%c0%ae%c0%ae/package.json',
      '/../web/index.html',
      '/..%2fsrc%2fmain.tsx',
      '//etc/passwd',
      '/..%2f..%2f..%2f..%2f..%2f..%2fetc%2fpasswd',
    ];
    for (const path of probes) {
      const res = await raw('GET', path);
      expect([path, res.status]).toEqual([path, expect.any(Number)]);
      // Refused, or (a path that is an app route once normalized) the app's index.html: never the file.
      const text = res.body.toString();
      expect([path, text.includes('"name": "chat-relay"') || text.includes('root:')]).toEqual([path, false]);
      if (res.status === 200) expect([path, text]).toEqual([path, readFileSync(join(DIST, 'index.html'), 'utf8')]);
      else expect([path, res.status]).toEqual([path, 404]);
    }
    expect(packageJson).toContain('"name": "chat-relay"');
  });

  it('HEAD answers the headers of GET without a body; other methods on app paths are 405', async () => {
    const get = await raw('GET', '/');
    const head = await raw('HEAD', '/');
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(head.headers['content-length']).toBe(get.headers['content-length']);
    expect(head.headers.etag).toBe(get.headers.etag);
    expectSecurityHeaders(head.headers);
    const asset = builtFiles().find((f) => f.startsWith('/assets/'))!;
    const headAsset = await raw('HEAD', asset);
    expect(headAsset.headers['cache-control']).toBe(HASHED_CACHE_CONTROL);
    expect(headAsset.body.length).toBe(0);
    const post = await raw('POST', '/chats/abc');
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
  });

  it('/api stays the API: unknown paths reach the catch-all (JSON 404), never index.html', async () => {
    const health = await raw('GET', '/api/v1/health');
    expect(health.status).toBe(200);
    for (const path of ['/api/nope', '/api/v1/nope', '/api/v1/chats/abc/nope', '/api']) {
      const res = await raw('GET', path);
      expect([path, res.status]).toEqual([path, 404]);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(res.body.toString()).error.code).toBe('NOT_FOUND');
    }
  });
});

describe('the instance secret is in no served file and no response', () => {
  /** The secret as it could leak: as is, base64, hex, URL-encoded. */
  const forms = () => {
    const secret = relay.secret!;
    return [
      secret,
      Buffer.from(secret).toString('base64'),
      Buffer.from(secret).toString('base64url'),
      Buffer.from(secret).toString('hex'),
      encodeURIComponent(secret),
    ];
  };
  const expectNoSecret = (what: string, text: string) => {
    for (const form of forms()) expect([what, text.includes(form)]).toEqual([what, false]);
  };
  const headerText = (headers: Headers | Record<string, unknown>) =>
    JSON.stringify(headers instanceof Headers ? [...headers.entries()] : headers);

  it('every file of the built app, and app routes, with and without a session', async () => {
    const { cookie, res: signIn } = await signInCookie(relay);
    expectNoSecret('sign-in answer', headerText(signIn.headers) + (await signIn.text()));
    const paths = [...builtFiles(), '/', '/chats/abc', '/sign-in', '/new', '/archived'];
    expect(paths.length).toBeGreaterThan(6);
    for (const path of paths) {
      const variants: Record<string, string>[] = [{}, { cookie }, { cookie, 'accept-encoding': 'identity' }];
      for (const headers of variants) {
        const res = await raw('GET', path, headers);
        expect([path, res.status]).toEqual([path, 200]);
        expectNoSecret(path, headerText(res.headers) + res.body.toString('latin1'));
      }
    }
  });

  it('API answers made with the session cookie: config, chats, the event stream, the API document', async () => {
    await seedChat(relay, { title: 'Secret audit', firstMessage: 'hello' });
    const { cookie } = await signInCookie(relay);
    const asBrowser = { cookie, origin: relay.url };
    for (const path of ['/api/v1/config', '/api/v1/chats', '/api/v1/doc', '/api/v1/reference', '/api/v1/health']) {
      const res = await fetch(`${relay.url}${path}`, { headers: asBrowser });
      expect([path, res.status]).toEqual([path, 200]);
      expectNoSecret(path, headerText(res.headers) + (await res.text()));
    }
    // The chats list holds the seeded chat: the cookie was accepted, not ignored.
    const chats = await (await fetch(`${relay.url}/api/v1/chats`, { headers: asBrowser })).json();
    expect(JSON.stringify(chats)).toContain('Secret audit');
    // The event stream's first bytes (it stays open: read what arrives first, then leave).
    const controller = new AbortController();
    const stream = await fetch(`${relay.url}/api/v1/events/stream`, { headers: asBrowser, signal: controller.signal });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = stream.body!.getReader();
    const first = await reader.read();
    controller.abort();
    const text = new TextDecoder().decode(first.value);
    expect(text.length).toBeGreaterThan(0);
    expectNoSecret('event stream', headerText(stream.headers) + text);
  });
});
