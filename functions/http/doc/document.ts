/**
 * The OpenAPI document both doc routes serve. On Lambda it is `openapi.json` beside the
 * bundle, written by the synth from the route table and every handler's schemas
 * (lib/openapi/write.ts), so this function bundles no other handler. Where that file is absent
 * (the local runtime and tests, which load every handler anyway) it is generated in-process
 * from the same modules, once per container.
 */
import { existsSync, readFileSync } from 'node:fs';
import { env } from '../../platform/env.js';

/** Beside index.mjs in the function's asset (api-function.ts `apiDocument`). */
const BUNDLED = new URL('./openapi.json', import.meta.url);
/** A variable, not a literal: esbuild must not follow it into every handler module. */
const GENERATOR = '../../../lib/openapi/load.js';

let cached: Promise<Record<string, unknown>> | undefined;

async function load(): Promise<Record<string, unknown>> {
  const document = existsSync(BUNDLED)
    ? (JSON.parse(readFileSync(BUNDLED, 'utf8')) as Record<string, unknown>)
    : ((await (
        (await import(GENERATOR)) as { generateOpenApiDocument(v: string): Promise<unknown> }
      ).generateOpenApiDocument(env().SERVICE_VERSION)) as Record<string, unknown>);
  // The deployed service's version, whatever version the synth wrote.
  return { ...document, info: { ...(document.info as object), version: env().SERVICE_VERSION } };
}

export function apiDocument(): Promise<Record<string, unknown>> {
  cached ??= load();
  cached.catch(() => (cached = undefined));
  return cached;
}
