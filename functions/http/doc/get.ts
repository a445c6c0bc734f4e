/** GET /api/v1/doc: the OpenAPI 3.1 document of this API (contract §14 item 31), public. */
import * as z from '../../platform/zod.js';
import { http } from '../../middleware/http.js';
import { json } from '../../model/replies.js';
import { apiDocument } from './document.js';

export const schemas = { replies: { 200: json('This OpenAPI 3.1 document.', z.record(z.string(), z.unknown())) } };

export const handler = http('doc/get', schemas, async () => ({ status: 200, body: await apiDocument() }));
