/**
 * The handlers' schemas, read from their modules by the route table, and the document built
 * from them. Importing every handler module is what the local runtime does anyway; on AWS only
 * the synth runs this (write.ts), so no function bundles the handlers of the others.
 */
import { routes } from '../routes.js';
import { buildOpenApiDocument } from './document.js';
import type { HandlerSchemas, OpenApiDocument } from './document.js';

interface HandlerModule {
  schemas?: HandlerSchemas;
  documented?: HandlerSchemas['documented'];
}

export async function loadHandlerSchemas(): Promise<Map<string, HandlerSchemas>> {
  const found = new Map<string, HandlerSchemas>();
  // One at a time, as local/server.ts mounts them: jest's ESM loader cannot link them concurrently.
  for (const { handler } of routes) {
    if (found.has(handler)) continue;
    const module = (await import(`../../functions/http/${handler}.js`)) as HandlerModule;
    found.set(handler, { ...module.schemas, ...(module.documented ? { documented: module.documented } : {}) });
  }
  return found;
}

export async function generateOpenApiDocument(version: string): Promise<OpenApiDocument> {
  return buildOpenApiDocument(await loadHandlerSchemas(), version);
}
