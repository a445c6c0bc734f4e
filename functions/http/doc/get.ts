/** GET /api/v1/doc: the OpenAPI 3.1 document of this API (contract §14 item 31), public. */
import { http } from '../../middleware/http.js';
import { apiDocument } from './document.js';

export const schemas = {};

export const handler = http('doc/get', schemas, async () => ({ status: 200, body: await apiDocument() }));
