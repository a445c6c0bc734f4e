/**
 * What a function's asset holds beside esbuild's bundle (lib/constructs/bundle.ts), as the shell
 * commands LocalBundle runs in the asset's folder after bundling: for an `images` function, sharp's
 * runtime files with its WebAssembly build (imageRuntimePackages); for any other, a check that sharp
 * was not inlined; for an `apiDocument` function, the OpenAPI document and, for the reference page,
 * Swagger UI's files. ApiFunction (api-function.ts) takes them through functionAsset.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root: bundling resolves entries and node_modules from here, whatever the cwd. */
export const projectRoot = fileURLToPath(new URL('../../', import.meta.url));

/** The packages an images function loads from its asset's node_modules, with their dependencies. */
export const IMAGE_RUNTIME_ROOTS = ['sharp', '@img/sharp-wasm32'] as const;

/** A string sharp's loader holds: a bundle that contains it inlined sharp instead of leaving it out. */
const SHARP_LOADER_MARK = '@img/sharp-wasm32/sharp.node';

interface PackageManifest {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
  os?: string[];
  cpu?: string[];
}

export interface RuntimePackage {
  name: string;
  version: string;
  /** Its folder relative to the project root, kept as is in the asset: `node_modules/sharp`. */
  path: string;
}

/**
 * What an `images` function needs beside its bundle: sharp's JavaScript and the WebAssembly
 * build of sharp + libvips (@img/sharp-wasm32), with their dependencies (not their optional
 * dependencies: those are the native prebuilts of every platform), as installed in the
 * project's node_modules, where `npm ci` puts them on any machine.
 *
 * Why wasm on Lambda: the functions run on linux-arm64, and npm installs sharp's native
 * prebuilt for the installing machine only (os/cpu fields; `--cpu` picks one, not two), so
 * the arm64 binary is never in node_modules on an x64 machine, and synth may not download it.
 * On Lambda sharp tries @img/sharp-linux-arm64, does not find it, and loads the wasm build.
 *
 * Throws (so synth fails) when a package is missing, when a platform-specific package would
 * be copied, or when sharp and its wasm build are not the same version.
 */
export function imageRuntimePackages(root: string = projectRoot): RuntimePackage[] {
  const rootDir = root.replace(/[\\/]+$/, '');
  const found = new Map<string, RuntimePackage>();
  const queue: { name: string; from: string }[] = IMAGE_RUNTIME_ROOTS.map((name) => ({ name, from: rootDir }));
  for (let next = queue.shift(); next; next = queue.shift()) {
    const dir = resolvePackageDir(next.name, next.from, rootDir);
    const path = relative(rootDir, dir).split(sep).join('/');
    if (found.has(path)) continue;
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as PackageManifest;
    if (manifest.os || manifest.cpu) {
      throw new Error(`${manifest.name} is platform-specific (os/cpu); it must not go into an images asset.`);
    }
    found.set(path, { name: manifest.name, version: manifest.version, path });
    for (const dependency of Object.keys(manifest.dependencies ?? {})) queue.push({ name: dependency, from: dir });
  }
  const [sharp, wasm] = IMAGE_RUNTIME_ROOTS.map((name) => found.get(`node_modules/${name}`)?.version);
  if (sharp !== wasm) {
    throw new Error(
      `sharp ${sharp} and @img/sharp-wasm32 ${wasm} differ: pin both to the same exact version in package.json.`,
    );
  }
  return [...found.values()];
}

/** Node's lookup of a package from a folder: its node_modules, then each parent's, within root. */
function resolvePackageDir(name: string, from: string, root: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dir === root || dirname(dir) === dir) break;
  }
  throw new Error(`${name} is not installed under ${root}/node_modules (needed by an images function): run npm ci.`);
}

const shellQuote = (value: string): string => `'${value.replaceAll("'", "'\\''")}'`;

/**
 * After esbuild: copy each runtime package into the asset, without its own nested
 * node_modules (a nested dependency is in the list by itself; anything else there, such as a
 * nested native prebuilt, stays out).
 */
function copyImageRuntime(outputDir: string): string[] {
  return imageRuntimePackages().map(({ path }) => {
    const from = shellQuote(join(projectRoot, path));
    const to = shellQuote(join(outputDir, path));
    return `mkdir -p ${to} && cp -R ${from}/. ${to}/ && rm -rf ${to}/node_modules`;
  });
}

/** Swagger UI's files the reference page inlines (functions/http/doc/reference.ts). */
export const REFERENCE_RENDERER_FILES = ['package.json', 'swagger-ui-bundle.js', 'swagger-ui.css'] as const;

/** After esbuild: the OpenAPI document, and for the reference page the renderer's files. */
function addApiDocument(outputDir: string, kind: 'document' | 'reference'): string[] {
  const tsx = shellQuote(join(projectRoot, 'node_modules', '.bin', 'tsx'));
  const writer = shellQuote(join(projectRoot, 'lib', 'openapi', 'write.ts'));
  const commands = [`${tsx} ${writer} ${shellQuote(join(outputDir, 'openapi.json'))}`];
  if (kind === 'reference') {
    const root = projectRoot.replace(/[\\/]+$/, '');
    const from = resolvePackageDir('swagger-ui-dist', root, root);
    const to = join(outputDir, 'node_modules', 'swagger-ui-dist');
    commands.push(`mkdir -p ${shellQuote(to)}`);
    for (const file of REFERENCE_RENDERER_FILES) commands.push(`cp ${shellQuote(join(from, file))} ${shellQuote(to)}/`);
  }
  return commands;
}

/** Fails the bundling of a function that imports images.ts without `images: true`. */
function refuseInlinedSharp(outputDir: string): string {
  // index.mjs and its chunks (sharp is imported with import(), so it would land in a chunk).
  const bundle = `-r --include='*.mjs' ${shellQuote(outputDir)}`;
  const message = shellQuote(
    'This function imports sharp (functions/platform/images.ts) but its ApiFunction lacks images: true; inlined, ' +
      'sharp would find no binary on Lambda.',
  );
  return `if grep -qF ${shellQuote(SHARP_LOADER_MARK)} ${bundle}; then echo ${message} >&2; exit 1; fi`;
}

/** The extras an ApiFunction asks for (ApiFunctionProps `images` and `apiDocument`). */
export interface AssetExtras {
  images?: boolean | undefined;
  apiDocument?: 'document' | 'reference' | undefined;
}

/**
 * How LocalBundle makes the asset of a function with `extras`: the packages left out of the
 * bundle (sharp, for an images function, loaded from the files copyImageRuntime adds), the
 * commands that complete the asset, and the folders whose files the asset also depends on.
 */
export function functionAsset(extras: AssetExtras): {
  external: string[];
  afterBundling: (outputDir: string) => string[];
  dependsOnFolders: string[];
} {
  return {
    external: extras.images ? ['sharp'] : [],
    afterBundling: (outputDir) => [
      ...(extras.images ? copyImageRuntime(outputDir) : [refuseInlinedSharp(outputDir)]),
      ...(extras.apiDocument ? addApiDocument(outputDir, extras.apiDocument) : []),
    ],
    // The API document is written from the route table and every route's schemas.
    dependsOnFolders: extras.apiDocument ? ['lib', 'functions'] : [],
  };
}
