/**
 * `npm start` rebuilds the web app when its sources changed (issue 26 item 1) and serves a clear
 * 503 when the build fails (local/web-build.ts, local/web-app.ts). Each test works on a copy of
 * the project's web/ in a temporary root (with the project's package.json and node_modules), so
 * the real web/dist is never touched and a source can be broken on purpose; the build is the real
 * `npm run build:web`.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { webSecurityHeaders } from '../../../lib/web-policy.js';
import { serveWebApp } from '../../../local/web-app.js';
import type { WebApp } from '../../../local/web-app.js';
import { prepareWebApp, projectRoot, webBuildStale } from '../../../local/web-build.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const roots: string[] = [];

/** A project root holding a copy of web/ (no build yet), the project's package.json and its node_modules. */
function copyProject(): string {
  const root = mkdtempSync(join(tmpdir(), 'chat-relay-web-build-'));
  roots.push(root);
  cpSync(join(ROOT, 'package.json'), join(root, 'package.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
  cpSync(join(ROOT, 'web'), join(root, 'web'), {
    recursive: true,
    filter: (source) => !source.startsWith(join(ROOT, 'web', 'dist')),
  });
  // The one module of functions/ the app bundles (lib/web-build.ts WEB_SOURCES).
  mkdirSync(join(root, 'functions', 'platform'), { recursive: true });
  cpSync(join(ROOT, 'functions/platform/text-pattern.ts'), join(root, 'functions/platform/text-pattern.ts'));
  return root;
}

const builtAt = (root: string) => statSync(join(root, 'web', 'dist', 'index.html')).mtimeMs;
/** A source edited after the last build: the build is dated 10 s back, the source now. */
function editAfterBuild(root: string, path: string): void {
  const past = new Date(Date.now() - 10_000);
  utimesSync(join(root, 'web', 'dist', 'index.html'), past, past);
  utimesSync(path, new Date(), new Date());
}

/** Where npm start's media downloads over the inline limit would be redirected (its S3's origin). */
const MEDIA_ORIGIN = 'http://127.0.0.1:4599';

/** Serves a prepared app the way npm start does, on a free port. */
async function serve(app: WebApp): Promise<{ url: string; server: Server }> {
  const headers = {
    own: webSecurityHeaders(MEDIA_ORIGIN),
    foreign: webSecurityHeaders(MEDIA_ORIGIN, { foreignBuild: true }),
  };
  const server = createServer((req, res) => void serveWebApp(req, res, app, headers));
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

let errors: ReturnType<typeof jest.spyOn>;
beforeAll(() => {
  // The failed build's output goes to the console (checked below); keep it out of the test log.
  errors = jest.spyOn(console, 'error').mockImplementation(() => undefined);
});
afterAll(() => {
  errors.mockRestore();
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

describe('npm start rebuilds the web app when its sources changed', () => {
  it('finds the project root from its module (also from the precompiled copy under node_modules/.cache)', () => {
    expect(projectRoot()).toBe(ROOT.replace(/\/$/, ''));
    const compiled = join(ROOT, 'node_modules', '.cache', 'chat-relay-start', 'abc', 'local');
    expect(projectRoot(compiled)).toBe(ROOT.replace(/\/$/, ''));
  });

  it('builds when there is no build, then not again until a source changes (src, index.html, config, public)', async () => {
    const root = copyProject();
    const lines: string[] = [];
    expect(webBuildStale(root)).toBe(true);
    const app = await prepareWebApp(undefined, (line) => lines.push(line), root);
    expect(app).toEqual({ dir: join(root, 'web', 'dist') });
    expect(lines).toEqual([expect.stringMatching(/^web app built \(its sources changed\) in \d+ ms$/)]);
    const first = builtAt(root);

    // Nothing changed: no build, nothing said.
    expect(webBuildStale(root)).toBe(false);
    expect(await prepareWebApp(undefined, (line) => lines.push(line), root)).toEqual(app);
    expect(lines).toHaveLength(1);
    expect(builtAt(root)).toBe(first);

    // Each kind of source, changed, makes the build stale; a build makes it fresh again.
    mkdirSync(join(root, 'web', 'public'), { recursive: true });
    writeFileSync(join(root, 'web', 'public', 'robots.txt'), 'User-agent: *\n');
    const sources = ['web/src/main.tsx', 'web/index.html', 'web/vite.config.ts', 'web/public/robots.txt'];
    for (const source of sources) {
      editAfterBuild(root, join(root, source));
      expect([source, webBuildStale(root)]).toEqual([source, true]);
      const before = builtAt(root);
      await prepareWebApp(undefined, (line) => lines.push(line), root);
      expect([source, builtAt(root) > before, webBuildStale(root)]).toEqual([source, true, false]);
    }
    expect(lines).toHaveLength(1 + sources.length);
    // The public file is part of the build.
    expect(existsSync(join(root, 'web', 'dist', 'robots.txt'))).toBe(true);
  });

  it('builds React for production even when NODE_ENV says otherwise (npm start under jest has NODE_ENV=test)', async () => {
    const root = copyProject();
    const saved = process.env.NODE_ENV;
    process.env.NODE_ENV = 'test';
    try {
      await prepareWebApp(undefined, () => undefined, root);
    } finally {
      process.env.NODE_ENV = saved;
    }
    const assets = join(root, 'web', 'dist', 'assets');
    const js = readdirSync(assets)
      .filter((name) => name.endsWith('.js'))
      .map((name) => readFileSync(join(assets, name), 'utf8'))
      .join('\n');
    // A development warning of React's, absent from its production build; production's error links instead.
    const build = {
      development: js.includes('Each child in a list should have a unique'),
      production: js.includes('react.dev/errors/'),
    };
    expect(build).toEqual({ development: false, production: true });
  });

  it('two starts at once build once (the second waits for the lock and finds the build fresh)', async () => {
    const root = copyProject();
    const lines: string[] = [];
    const [a, b] = await Promise.all([
      prepareWebApp(undefined, (line) => lines.push(line), root),
      prepareWebApp(undefined, (line) => lines.push(line), root),
    ]);
    expect(a).toEqual({ dir: join(root, 'web', 'dist') });
    expect(b).toEqual(a);
    expect(lines).toHaveLength(1);
    expect(webBuildStale(root)).toBe(false);
  });

  it('a failed build leaves the app unavailable: its paths answer a clear 503, and the build output is on the console', async () => {
    const root = copyProject();
    writeFileSync(join(root, 'web', 'src', 'main.tsx'), 'export const broken = (;\n');
    errors.mockClear();
    const app = await prepareWebApp(undefined, () => undefined, root);
    expect(app.unavailable).toMatch(/could not be built: `npm run build:web` failed.*The API at \/api\/v1 is up/);
    expect(String(errors.mock.calls[0]?.[0])).toMatch(/build failed[\s\S]*main\.tsx/);
    const { url, server } = await serve(app);
    try {
      for (const path of ['/', '/chats/abc', '/assets/index-abc.js']) {
        const res = await fetch(`${url}${path}`);
        expect([path, res.status]).toEqual([path, 503]);
        expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
        expect(res.headers.get('cache-control')).toBe('no-store');
        for (const [name, value] of Object.entries(webSecurityHeaders(MEDIA_ORIGIN)))
          expect(res.headers.get(name)).toBe(value);
        expect(await res.text()).toBe(`${app.unavailable}\n`);
      }
      const head = await fetch(`${url}/`, { method: 'HEAD' });
      expect(head.status).toBe(503);
      expect(await head.text()).toBe('');
    } finally {
      server.close();
    }
    // Still stale: the next start tries again.
    expect(webBuildStale(root)).toBe(true);
  });

  it('RELAY_WEB_DIR is served as it is, never built; without an index.html it is a 503 naming the folder', async () => {
    const root = copyProject();
    const other = mkdtempSync(join(tmpdir(), 'chat-relay-other-ui-'));
    roots.push(other);
    const lines: string[] = [];
    const missing = await prepareWebApp(other, (line) => lines.push(line), root);
    expect(missing.unavailable).toBe(`No web app to serve: RELAY_WEB_DIR (${other}) holds no index.html.`);
    writeFileSync(join(other, 'index.html'), '<!doctype html><title>Other UI</title>');
    const given = await prepareWebApp(other, (line) => lines.push(line), root);
    // With the relay's sign-in page from the project's web/public for the files it lacks, and
    // marked another build than ours (its CSP allows inline styles).
    expect(given).toEqual({ dir: other, signInDir: join(root, 'web', 'public'), foreign: true });
    expect(lines).toEqual([]);
    // The project's own build was not made.
    expect(existsSync(join(root, 'web', 'dist'))).toBe(false);
    const { url, server } = await serve(given);
    try {
      const res = await fetch(`${url}/chats/x`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('Other UI');
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toBe(webSecurityHeaders(MEDIA_ORIGIN, { foreignBuild: true })['content-security-policy']);
      expect(csp).toContain("style-src 'self' 'unsafe-inline';");
      expect(csp).toContain("script-src 'self';");
    } finally {
      server.close();
    }
    // RELAY_WEB_DIR naming our own build is ours: its strict CSP.
    mkdirSync(join(root, 'web', 'dist'), { recursive: true });
    writeFileSync(join(root, 'web', 'dist', 'index.html'), '<!doctype html><title>Ours</title>');
    const ours = await prepareWebApp(join(root, 'web', 'dist'), (line) => lines.push(line), root);
    expect(ours.foreign).toBeUndefined();
    const own = await serve(ours);
    try {
      const res = await fetch(`${own.url}/`);
      expect(res.headers.get('content-security-policy')).toBe(
        webSecurityHeaders(MEDIA_ORIGIN)['content-security-policy'],
      );
      expect(res.headers.get('content-security-policy')).toContain("style-src 'self';");
    } finally {
      own.server.close();
    }
  });
});
