/**
 * The OpenAPI document made outside Lambda and outside the local runtime: by the synth
 * (write.ts) and for the web app's generated types (bin/web-types.ts). Loading the handler
 * modules reads their environment and hands the stream handler to Lambda's
 * `awslambda.streamifyResponse`; both are stood in for here (nothing is invoked, only the
 * schemas are read).
 */
import type { OpenApiDocument } from './document.js';

export async function standaloneDocument(version = '0.0.0'): Promise<OpenApiDocument> {
  // Handler modules read their environment while loading (functions/platform/env.ts needs a
  // table name); nothing here calls AWS, so a placeholder name is enough.
  process.env.TABLE_NAME ||= 'openapi-document';
  const lambdaGlobal = ((globalThis as { awslambda?: Record<string, unknown> }).awslambda ??= {});
  lambdaGlobal.streamifyResponse ??= <T>(handler: T): T => handler;
  const { generateOpenApiDocument } = await import('./load.js');
  return generateOpenApiDocument(version);
}
