/**
 * The bundling of `images: true` functions (lib/constructs/function-asset.ts): a tiny stack with
 * one function that imports functions/platform/images.ts and one that does not, synthesized
 * with real bundling, offline. The image function's asset must hold sharp's WebAssembly build
 * and no native binary (Lambda is arm64; this machine's prebuilt is x64), and the asset must
 * work: it is run here, from its own folder, on the wasm build, as Lambda will run it.
 */
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Stack } from 'aws-cdk-lib';
import sharp from 'sharp';
import { ApiFunction } from '../../lib/constructs/api-function.js';
import { IMAGE_RUNTIME_ROOTS, imageRuntimePackages, projectRoot } from '../../lib/constructs/function-asset.js';
import type { ImageResult } from './fixtures/image-handler.js';
import { quietApp, resourcesOfType } from './synth.js';
import type { CfnTemplate } from './synth.js';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}.ts`, import.meta.url));

interface Synth {
  outdir: string;
  assetOf: (id: string) => string;
}

function synthStack(functions: Record<string, { entry: string; images?: boolean }>): Synth {
  const outdir = mkdtempSync(join(tmpdir(), 'chat-relay-images-'));
  const app = quietApp({
    outdir,
    context: { 'aws:cdk:bundling-stacks': ['**'], 'aws:cdk:enable-asset-metadata': true },
  });
  const stack = new Stack(app, 'ImageBundle');
  let json: CfnTemplate;
  try {
    // Bundling runs as each function is constructed.
    for (const [id, props] of Object.entries(functions)) new ApiFunction(stack, id, props);
    json = app.synth().getStackByName(stack.stackName).template as CfnTemplate;
  } catch (error) {
    rmSync(outdir, { recursive: true, force: true });
    throw error;
  }
  const functionsById = resourcesOfType(json, 'AWS::Lambda::Function');
  return {
    outdir,
    assetOf: (id) => {
      const [, resource] = functionsById.find(([logicalId]) => logicalId.startsWith(id))!;
      return join(outdir, String(resource.Metadata?.['aws:asset:path']));
    },
  };
}

/** Every file under a folder, as paths relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((path) => statSync(join(dir, path)).isFile())
    .map((path) => path.split('\\').join('/'))
    .sort();
}

const sizeOf = (dir: string) => filesUnder(dir).reduce((total, path) => total + statSync(join(dir, path)).size, 0);

const isElf = (path: string) => {
  const head = readFileSync(path).subarray(0, 4);
  return head.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]));
};

/**
 * Runs the asset's handler in a fresh Node process from the asset folder (outside the project,
 * so nothing resolves from the project's node_modules), timing the cold import.
 */
function runAsset(assetDir: string, images: Buffer[]) {
  const script = `
    const started = performance.now();
    const { handler } = await import(${JSON.stringify(pathToFileURL(join(assetDir, 'index.mjs')).href)});
    const importMs = performance.now() - started;
    const input = JSON.parse((await import('node:fs')).readFileSync(0, 'utf8'));
    const output = await handler(input);
    process.stdout.write(JSON.stringify({ importMs, rssMb: process.memoryUsage().rss / 1e6, ...output }));
  `;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: assetDir,
    input: JSON.stringify({ images: images.map((image) => image.toString('base64')) }),
    env: { PATH: process.env.PATH ?? '', NODE_OPTIONS: '--enable-source-maps' },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    timeout: 120_000,
  });
  if (child.status !== 0) throw new Error(`The asset failed (${child.status}): ${child.error ?? child.stderr}`);
  return JSON.parse(child.stdout) as {
    importMs: number;
    rssMb: number;
    runtime: { sharp: string; libvips: string; build: string };
    results: ImageResult[];
  };
}

function photo(width: number, height: number) {
  const data = Buffer.alloc(width * height * 3);
  for (let y = 0, i = 0; y < height; y++)
    for (let x = 0; x < width; x++, i += 3) {
      data[i] = ((x * 255) / width) | 0;
      data[i + 1] = ((y * 255) / height) | 0;
      data[i + 2] = (x * y) & 0xff;
    }
  return sharp(data, { raw: { width, height, channels: 3 } });
}

describe('ApiFunction images: true (bundled offline for arm64 Lambda)', () => {
  let synth: Synth;
  let imageAsset: string;
  let plainAsset: string;

  beforeAll(() => {
    synth = synthStack({
      Thumbs: { entry: fixture('image-handler'), images: true },
      Plain: { entry: fixture('plain-handler') },
    });
    imageAsset = synth.assetOf('Thumbs');
    plainAsset = synth.assetOf('Plain');
  });
  afterAll(() => synth && rmSync(synth.outdir, { recursive: true, force: true }));

  it('puts the wasm build of sharp and libvips into the asset, with sharp left out of the bundle', () => {
    const files = filesUnder(imageAsset);
    const wasm = files.filter((path) => path.endsWith('.wasm'));
    expect(wasm).toEqual([
      expect.stringMatching(/^node_modules\/@img\/sharp-wasm32\/lib\/sharp-wasm32-[\d.]+\.node\.wasm$/),
    ]);
    expect(files).toEqual(
      expect.arrayContaining([
        'index.mjs',
        'node_modules/sharp/package.json',
        'node_modules/@img/sharp-wasm32/package.json',
        'node_modules/@emnapi/runtime/package.json',
      ]),
    );
    const bundle = readFileSync(join(imageAsset, 'index.mjs'), 'utf8');
    expect(bundle).toMatch(/import\(\s*["']sharp["']\s*\)/);
    expect(bundle).not.toContain('@img/sharp-wasm32/sharp.node');
  });

  it('holds no native binary: nothing for linux-x64 (this machine), nothing native at all', () => {
    const files = filesUnder(imageAsset);
    expect(
      files.filter((path) => /linux-x64|linuxmusl|darwin|win32|\.node$|\.so(\.|$)|\.dylib$|\.dll$/.test(path)),
    ).toEqual([]);
    expect(files.filter((path) => isElf(join(imageAsset, path)))).toEqual([]);
    expect(
      files.filter((path) => path.startsWith('node_modules/')).map((path) => path.split('/').slice(1, 3).join('/')),
    ).not.toContainEqual(expect.stringMatching(/^@img\/sharp-(linux|libvips)/));
  });

  it('copies exactly the runtime packages, each the installed version', () => {
    const packages = imageRuntimePackages();
    for (const { name, version, path } of packages) {
      const manifest = JSON.parse(readFileSync(join(imageAsset, path, 'package.json'), 'utf8')) as {
        name: string;
        version: string;
      };
      expect({ name: manifest.name, version: manifest.version }).toEqual({ name, version });
    }
    const copied = new Set(
      filesUnder(imageAsset)
        .filter((path) => path.endsWith('/package.json'))
        .map((path) => dirname(path))
        .filter(
          (dir) => existsSync(join(projectRoot, dir, 'package.json')) && /node_modules\/(@[^/]+\/)?[^/]+$/.test(dir),
        ),
    );
    expect([...copied].sort()).toEqual(packages.map(({ path }) => path).sort());
  });

  it('leaves a function without images as it was: one bundle, no node_modules', () => {
    expect(filesUnder(plainAsset)).toEqual(['index.mjs', 'index.mjs.map']);
  });

  it('is small enough for Lambda (250 MB unzipped)', () => {
    const bytes = sizeOf(imageAsset);
    console.log(
      `images asset: ${(bytes / 1e6).toFixed(1)} MB unzipped (plain function: ` +
        `${(sizeOf(plainAsset) / 1e3).toFixed(1)} kB)`,
    );
    expect(bytes).toBeLessThan(40e6);
  });

  it('works from the asset alone on the wasm build: thumbnails, orientation, refusals', async () => {
    const big = await photo(4000, 3000).jpeg({ quality: 90 }).toBuffer();
    const rotated = await photo(300, 100).jpeg().withMetadata({ orientation: 6 }).toBuffer();
    const animated = await sharp(Buffer.alloc(20 * 30 * 3, 0x80), {
      raw: { width: 20, height: 30, channels: 3, pageHeight: 10 },
    })
      .gif()
      .toBuffer();
    const png = await photo(300, 200).png().toBuffer();
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="9" height="9"/>');
    const polyglot = Buffer.concat([png.subarray(0, 8), Buffer.from('<html><script>alert(1)</script></html>')]);

    const run = runAsset(imageAsset, [big, big, rotated, animated, png.subarray(0, png.length >> 1), svg, polyglot]);

    expect(run.runtime.build).toBe('wasm');
    const [cold, warm, portrait, still, truncated, refusedSvg, refusedPolyglot] = run.results;
    expect(cold).toMatchObject({ width: 512, height: 384, sourceType: 'image/jpeg' });
    expect(warm).toMatchObject({ width: 512, height: 384 });
    expect(portrait).toMatchObject({ width: 100, height: 300 });
    expect(still).toMatchObject({ width: 20, height: 10, sourceType: 'image/gif' });
    for (const refused of [truncated, refusedSvg, refusedPolyglot]) expect(refused).toHaveProperty('refused');
    const webp = Buffer.from((cold as { webpBase64: string }).webpBase64, 'base64');
    expect(await sharp(webp).metadata()).toMatchObject({ format: 'webp', width: 512, height: 384 });
    console.log(
      `images asset on wasm: import ${run.importMs.toFixed(0)} ms; 4000x3000 JPEG (${(big.length / 1e6).toFixed(1)} ` +
        `MB) → thumbnail ` +
        `${cold!.ms.toFixed(0)} ms first (sharp load + wasm compile included), ${warm!.ms.toFixed(0)} ms warm; rss ` +
        `${run.rssMb.toFixed(0)} MB`,
    );
  });
});

describe('ApiFunction without images', () => {
  it('fails the synth when it imports images.ts (sharp would be inlined and find no binary)', () => {
    expect(() => synthStack({ Forgot: { entry: fixture('image-handler') } })).toThrow(
      /Failed to bundle asset[^]*lacks images: true/,
    );
  });
});

describe('imageRuntimePackages', () => {
  it('is sharp, its wasm build, and their non-optional dependencies', () => {
    const names = imageRuntimePackages().map(({ name }) => name);
    expect(names).toEqual(expect.arrayContaining([...IMAGE_RUNTIME_ROOTS, '@emnapi/runtime', 'detect-libc']));
    expect(names.filter((name) => /^@img\/sharp-(?!wasm32$)/.test(name))).toEqual([]);
  });

  it('pins sharp and @img/sharp-wasm32 to the same exact version in package.json', () => {
    const { dependencies } = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(dependencies.sharp).toMatch(/^\d+\.\d+\.\d+$/);
    expect(dependencies['@img/sharp-wasm32']).toBe(dependencies.sharp);
  });

  describe('on a made-up node_modules', () => {
    let root: string;
    const install = (path: string, manifest: Record<string, unknown>) => {
      mkdirSync(join(root, path), { recursive: true });
      writeFileSync(join(root, path, 'package.json'), JSON.stringify(manifest));
    };
    beforeEach(() => {
      root = mkdtempSync(join(tmpdir(), 'chat-relay-modules-'));
      install('node_modules/sharp', {
        name: 'sharp',
        version: '1.0.0',
        dependencies: { dep: '^2' },
        optionalDependencies: { '@img/sharp-linux-x64': '1.0.0' },
      });
      install('node_modules/@img/sharp-linux-x64', {
        name: '@img/sharp-linux-x64',
        version: '1.0.0',
        cpu: ['x64'],
        os: ['linux'],
      });
      install('node_modules/sharp/node_modules/dep', { name: 'dep', version: '2.0.0' });
      install('node_modules/dep', { name: 'dep', version: '1.0.0' });
      install('node_modules/@img/sharp-wasm32', {
        name: '@img/sharp-wasm32',
        version: '1.0.0',
        dependencies: { dep: '^1' },
      });
    });
    afterEach(() => rmSync(root, { recursive: true, force: true }));

    it('resolves nested copies as Node does and skips optional (platform) dependencies', () => {
      expect(
        imageRuntimePackages(root)
          .map(({ path, version }) => `${path}@${version}`)
          .sort(),
      ).toEqual([
        'node_modules/@img/sharp-wasm32@1.0.0',
        'node_modules/dep@1.0.0',
        'node_modules/sharp/node_modules/dep@2.0.0',
        'node_modules/sharp@1.0.0',
      ]);
    });

    it('refuses sharp and a wasm build of another version', () => {
      install('node_modules/@img/sharp-wasm32', { name: '@img/sharp-wasm32', version: '1.0.1' });
      expect(() => imageRuntimePackages(root)).toThrow(/sharp 1\.0\.0 and @img\/sharp-wasm32 1\.0\.1 differ/);
    });

    it('refuses a platform-specific package among the dependencies', () => {
      install('node_modules/dep', { name: 'dep', version: '1.0.0', cpu: ['x64'] });
      expect(() => imageRuntimePackages(root)).toThrow(/dep is platform-specific/);
    });

    it('says what is missing', () => {
      rmSync(join(root, 'node_modules/@img/sharp-wasm32'), { recursive: true });
      expect(() => imageRuntimePackages(root)).toThrow(/@img\/sharp-wasm32 is not installed/);
    });
  });
});
