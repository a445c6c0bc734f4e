/**
 * Writes the OpenAPI document as JSON to the path given: `tsx lib/openapi/write.ts <file>`.
 * The synth runs it after bundling each `apiDocument` route's function (api-function.ts), so
 * the deployed document is made from the very schemas that were bundled.
 */
import { writeFileSync } from 'node:fs';

const [target] = process.argv.slice(2);
if (!target) throw new Error('usage: tsx lib/openapi/write.ts <output.json>');
// Handler modules read their environment while loading (functions/platform/env.ts needs a
// table name); nothing here calls AWS, so a placeholder name is enough. Set before the imports.
process.env.TABLE_NAME ||= 'openapi-document';
// A streaming handler (the event stream) hands its function to Lambda's `awslambda.streamifyResponse`
// as its module loads; outside Lambda a stand-in that returns it as is lets the module load (only
// its schemas are read here, nothing is invoked).
const lambdaGlobal = ((globalThis as { awslambda?: Record<string, unknown> }).awslambda ??= {});
lambdaGlobal.streamifyResponse ??= <T>(handler: T): T => handler;
const { generateOpenApiDocument } = await import('./load.js');
writeFileSync(target, JSON.stringify(await generateOpenApiDocument('0.0.0')));
