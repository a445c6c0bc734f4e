/**
 * Writes the OpenAPI document as JSON to the path given: `tsx lib/openapi/write.ts <file>`.
 * The synth runs it after bundling each `apiDocument` route's function (api-function.ts), so
 * the deployed document is made from the very schemas that were bundled.
 */
import { writeFileSync } from 'node:fs';
import { standaloneDocument } from './standalone.js';

const [target] = process.argv.slice(2);
if (!target) throw new Error('usage: tsx lib/openapi/write.ts <output.json>');
writeFileSync(target, JSON.stringify(await standaloneDocument('0.0.0')));
