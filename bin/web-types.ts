/** `npm run web:types`: writes the web app's API types from the OpenAPI document (lib/openapi/web-types.ts). */
import { writeFileSync } from 'node:fs';
import { standaloneDocument } from '../lib/openapi/standalone.js';
import { WEB_TYPES_FILE, webTypesOf } from '../lib/openapi/web-types.js';

writeFileSync(new URL(`../${WEB_TYPES_FILE}`, import.meta.url), await webTypesOf(await standaloneDocument()));
console.log(`wrote ${WEB_TYPES_FILE}`);
