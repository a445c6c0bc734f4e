/**
 * The web app's hosting pieces that need no full synth: the CloudFront Functions' code run on
 * tables of requests (the SPA fallback against lib/web-policy.ts isAppRoute, so the two cannot
 * drift; the API behavior's viewer-host copy), and which build the stack deploys (lib/web-build.ts:
 * `-c webDir`, else web/dist rebuilt when stale). stack.test.ts checks the template.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { viewerHostCode } from '../../lib/constructs/edge.js';
import { HASHED_ASSETS_FILTER, missingSignInFiles, spaFallbackCode } from '../../lib/constructs/web-hosting.js';
import { WebDirError, ensureWebBuilt, resolveWebDir, webBuildIsStale, webBuildLock } from '../../lib/web-build.js';
import {
  APP_ENTRY,
  SIGN_IN_FILES,
  SIGN_IN_SOURCE_DIR,
  UNHASHED_CACHE_CONTROL,
  isAppRoute,
} from '../../lib/web-policy.js';
import { VIEWER_HOST_HEADER } from '../../functions/middleware/origin-verify.js';
import { FIXTURE_WEB_DIR, cdkPath, resourcesOfType, synthesize } from './synth.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

interface CfRequest {
  uri: string;
  headers: Record<string, { value: string }>;
}
type Handler = (event: { request: CfRequest }) => CfRequest;

/** A CloudFront Function's code as CloudFront runs it: its `handler` on a viewer-request event. */
const handlerOf = (code: string): Handler => new Function(`${code}\nreturn handler;`)() as Handler;

describe('SPA fallback (CloudFront Function)', () => {
  const fallback = handlerOf(spaFallbackCode);
  const paths = [
    '/',
    '/chats',
    '/chats/',
    '/chats/0aB3xYz9',
    '/chats/0aB3xYz9/settings',
    '/archived',
    '/settings/v1.2',
    '/a.b/c',
    '/file.',
    '/.well-known/x',
    '/index.html',
    '/assets/index-BJs6RdM2.js',
    '/assets/index-D8s1.css',
    '/favicon.ico',
    '/manifest.webmanifest',
    '/robots.txt',
    '/archive.tar.gz',
    '/chats/x.json',
  ];

  it('rewrites exactly the paths isAppRoute calls routes to /index.html, and leaves files as they are', () => {
    for (const path of paths) {
      const request = fallback({ request: { uri: path, headers: {} } });
      expect([path, request.uri]).toEqual([path, isAppRoute(path) ? APP_ENTRY : path]);
    }
    // The table holds both kinds.
    expect(new Set(paths.map(isAppRoute))).toEqual(new Set([true, false]));
    expect(isAppRoute('/chats/0aB3xYz9')).toBe(true);
    expect(isAppRoute('/assets/index-BJs6RdM2.js')).toBe(false);
  });
});

describe('viewer host (CloudFront Function on /api/*)', () => {
  const copy = handlerOf(viewerHostCode);

  it('copies the Host the viewer used, replacing a value the client sent', () => {
    const sent = copy({
      request: {
        uri: '/api/v1/chats',
        headers: { host: { value: 'relay.example.com' }, [VIEWER_HOST_HEADER]: { value: 'evil.example' } },
      },
    });
    expect(sent.headers[VIEWER_HOST_HEADER]).toEqual({ value: 'relay.example.com' });
    expect(sent.uri).toBe('/api/v1/chats');
    const plain = copy({ request: { uri: '/api/v1/chats', headers: { host: { value: 'd111.cloudfront.net' } } } });
    expect(plain.headers[VIEWER_HOST_HEADER]).toEqual({ value: 'd111.cloudfront.net' });
  });

  it('drops a client-sent value when there is no Host', () => {
    const sent = copy({
      request: { uri: '/api/v1/chats', headers: { [VIEWER_HOST_HEADER]: { value: 'evil.example' } } },
    });
    expect(sent.headers[VIEWER_HOST_HEADER]).toBeUndefined();
  });
});

describe('which web build the stack deploys (lib/web-build.ts)', () => {
  let root: string;
  /** Each build appends a line here: how many times it ran. */
  const builds = () => readFileSync(join(root, 'builds.log'), 'utf8').split('\n').filter(Boolean).length;
  const at = (path: string, seconds: number) => utimesSync(join(root, path), seconds, seconds);

  beforeAll(() => {
    // A project whose build:web copies web/index.html into web/dist, as Vite would build it.
    root = mkdtempSync(join(tmpdir(), 'chat-relay-web-build-'));
    mkdirSync(join(root, 'web/src'), { recursive: true });
    writeFileSync(join(root, 'web/index.html'), '<!doctype html><title>app</title>');
    writeFileSync(join(root, 'web/src/main.ts'), 'export {};');
    writeFileSync(join(root, 'web/vite.config.ts'), 'export default {};');
    // The one module of functions/ the app bundles (the request pattern rule it shares).
    mkdirSync(join(root, 'functions/platform'), { recursive: true });
    writeFileSync(join(root, 'functions/platform/text-pattern.ts'), 'export {};');
    writeFileSync(join(root, 'builds.log'), '');
    writeFileSync(
      join(root, 'build.mjs'),
      [
        "import { appendFileSync, copyFileSync, existsSync, mkdirSync } from 'node:fs';",
        "appendFileSync('builds.log', 'built\\n');",
        "if (existsSync('fail')) process.exit(3);",
        "mkdirSync('web/dist/assets', { recursive: true });",
        "copyFileSync('web/index.html', 'web/dist/index.html');",
      ].join('\n'),
    );
    writeFileSync(join(root, 'package.json'), JSON.stringify({ scripts: { 'build:web': 'node build.mjs' } }));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('builds when web/dist is missing, not again while it is newer than every source, and again after a change', () => {
    expect(webBuildIsStale(root)).toBe(true);
    expect(ensureWebBuilt(root)).toBe(join(root, 'web/dist'));
    expect(builds()).toBe(1);
    // Sources an hour older than the build: nothing to do.
    const now = Date.now() / 1000;
    const shared = 'functions/platform/text-pattern.ts';
    for (const source of ['web/index.html', 'web/src/main.ts', 'web/src', 'web/vite.config.ts', shared]) {
      at(source, now - 3600);
    }
    at('web/dist/index.html', now - 60);
    expect(webBuildIsStale(root)).toBe(false);
    expect(ensureWebBuilt(root)).toBe(join(root, 'web/dist'));
    expect(builds()).toBe(1);
    // Each kind of source, changed after the build, makes it stale.
    for (const source of ['web/src/main.ts', 'web/index.html', 'web/vite.config.ts', shared]) {
      at(source, now);
      expect([source, webBuildIsStale(root)]).toEqual([source, true]);
      at(source, now - 3600);
    }
    mkdirSync(join(root, 'web/src/deep'), { recursive: true });
    writeFileSync(join(root, 'web/src/deep/new.ts'), 'export {};');
    // Only the new file is newer than the build (not the folders it was made in).
    at('web/src/deep/new.ts', now);
    at('web/src/deep', now - 3600);
    at('web/src', now - 3600);
    expect(webBuildIsStale(root)).toBe(true);
    ensureWebBuilt(root);
    expect(builds()).toBe(2);
    expect(webBuildIsStale(root)).toBe(false);
  });

  it('waits for a build an `npm start` holds the lock of, and then takes that build instead of making its own', () => {
    // A source newer than the build: stale.
    const later = Date.now() / 1000 + 120;
    utimesSync(join(root, 'web/src/main.ts'), later, later);
    expect(webBuildIsStale(root)).toBe(true);
    const before = builds();
    const lock = webBuildLock(root);
    expect(lock.take()).toBe(true);
    // The other build: it writes a fresh index.html a moment later and lets the lock go.
    const other = spawn(
      process.execPath,
      [
        '-e',
        [
          "const { rmSync, utimesSync, writeFileSync } = require('node:fs');",
          'setTimeout(() => {',
          "  writeFileSync('web/dist/index.html', '<!doctype html><title>theirs</title>');",
          `  utimesSync('web/dist/index.html', ${later + 60}, ${later + 60});`,
          `  rmSync(${JSON.stringify(join(root, 'node_modules/.cache/chat-relay-web-build.lock'))}, { recursive: true });`,
          '}, 500);',
        ].join('\n'),
      ],
      { cwd: root, stdio: 'ignore' },
    );
    try {
      expect(ensureWebBuilt(root)).toBe(join(root, 'web/dist'));
      expect(builds()).toBe(before);
      expect(readFileSync(join(root, 'web/dist/index.html'), 'utf8')).toContain('theirs');
      // The lock is free again.
      expect(lock.take()).toBe(true);
      lock.release();
    } finally {
      other.kill();
      // Times back in the present for the tests after this one.
      at('web/src/main.ts', Date.now() / 1000 - 3600);
      at('web/dist/index.html', Date.now() / 1000 - 60);
    }
  });

  it('reports a failed build instead of deploying an old one', () => {
    writeFileSync(join(root, 'fail'), '');
    writeFileSync(join(root, 'web/src/main.ts'), 'export const changed = 1;');
    utimesSync(join(root, 'web/src/main.ts'), Date.now() / 1000 + 60, Date.now() / 1000 + 60);
    try {
      expect(() => ensureWebBuilt(root)).toThrow(/"npm run build:web" failed \(exit 3\)/);
    } finally {
      rmSync(join(root, 'fail'));
    }
  });

  it('takes -c webDir as it is when it holds an index.html, without building ours', () => {
    const before = builds();
    expect(resolveWebDir(root, FIXTURE_WEB_DIR)).toBe(FIXTURE_WEB_DIR.replace(/\/$/, ''));
    expect(builds()).toBe(before);
  });

  it('refuses a -c webDir without index.html, naming it', () => {
    const empty = mkdtempSync(join(tmpdir(), 'chat-relay-no-web-'));
    try {
      expect(() => resolveWebDir(root, empty)).toThrow(WebDirError);
      expect(() => resolveWebDir(root, empty)).toThrow(`-c webDir=${empty}: ${empty} has no index.html.`);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe('-c webDir in the stack', () => {
  it('deploys the folder it names (another build, e.g. OpenGram UI), with the sign-in files it lacks', () => {
    const other = mkdtempSync(join(tmpdir(), 'chat-relay-other-ui-'));
    writeFileSync(join(other, 'index.html'), '<!doctype html><title>another UI</title>');
    // The other UI brings its own stylesheet of that name: it is kept, the other two come from web/public.
    writeFileSync(join(other, 'relay-sign-in.css'), '/* the other UI’s own */');
    const synth = synthesize({ webDir: other });
    try {
      const deployments = resourcesOfType(synth.json, 'Custom::CDKBucketDeployment');
      // Still two deployments (one copier, one layer): the sign-in files are a source, not a resource.
      expect(deployments).toHaveLength(2);
      expect(resourcesOfType(synth.json, 'AWS::Lambda::LayerVersion')).toHaveLength(1);
      const [assets, pages] = ['DeployAssets', 'DeployPages'].map(
        (name) => deployments.find(([, d]) => cdkPath(d).includes(`/Web/${name}/`))![1].Properties!,
      );
      const staged = (key: string) => join(synth.outdir, `asset.${key.replace(/\.zip$/, '')}`);
      const [build, signIn] = pages!.SourceObjectKeys as string[];
      expect(pages!.SourceObjectKeys).toHaveLength(2);
      expect(assets!.SourceObjectKeys).toEqual([build]);
      expect(readFileSync(join(staged(build!), 'index.html'), 'utf8')).toBe('<!doctype html><title>another UI</title>');
      expect(readdirSync(staged(signIn!)).sort()).toEqual(['relay-sign-in.html', 'relay-sign-in.js']);
      for (const name of ['relay-sign-in.html', 'relay-sign-in.js']) {
        expect(readFileSync(join(staged(signIn!), name), 'utf8')).toBe(
          readFileSync(join(ROOT, SIGN_IN_SOURCE_DIR, name), 'utf8'),
        );
      }
      // Deployed as the pages are: no-cache, outside the assets/ filter.
      expect(pages).toMatchObject({
        Exclude: [HASHED_ASSETS_FILTER],
        SystemMetadata: { 'cache-control': UNHASHED_CACHE_CONTROL },
      });
      expect(SIGN_IN_FILES.every((name) => isAppRoute(`/${name}`) === false)).toBe(true);
    } finally {
      synth.dispose();
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('gives another build a CSP with inline styles (never inline scripts); ours keeps styles to its files', () => {
    const cspOf = (foreignBuild: boolean) => {
      const synth = synthesize({ deployment: { foreignBuild } });
      try {
        const [policy] = resourcesOfType(synth.json, 'AWS::CloudFront::ResponseHeadersPolicy').filter(([, r]) =>
          cdkPath(r).includes('/Web/Headers/'),
        );
        const config = policy![1].Properties!.ResponseHeadersPolicyConfig as {
          SecurityHeadersConfig: { ContentSecurityPolicy: { ContentSecurityPolicy: unknown } };
        };
        return JSON.stringify(config.SecurityHeadersConfig.ContentSecurityPolicy.ContentSecurityPolicy);
      } finally {
        synth.dispose();
      }
    };
    const foreign = cspOf(true);
    expect(foreign).toContain("style-src 'self' 'unsafe-inline';");
    expect(foreign).toContain("script-src 'self';");
    const ours = cspOf(false);
    expect(ours).toContain("style-src 'self';");
    expect(ours).not.toContain('unsafe-inline');
  });

  it('adds no second source to a build that has the sign-in files (ours copies web/public)', () => {
    expect(missingSignInFiles(FIXTURE_WEB_DIR)).toEqual([]);
    expect(missingSignInFiles(join(ROOT, SIGN_IN_SOURCE_DIR))).toEqual([]);
  });
});
