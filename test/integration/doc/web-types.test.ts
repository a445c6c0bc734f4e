/**
 * The web app's API types (web/src/api/schema.d.ts) are generated from the OpenAPI document
 * (lib/openapi/web-types.ts): a route, a field or a reply the document changes fails here until
 * `npm run web:types` writes them again, and then the app's typecheck shows every call it breaks.
 */
import { readFileSync } from 'node:fs';
import { publishedDocumentFile } from '../../support/openapi-check.js';
import { WEB_TYPES_FILE, webTypesOf } from '../../../lib/openapi/web-types.js';
import type { OpenApiDocument } from '../../../lib/openapi/document.js';

const document = (): OpenApiDocument & { paths: Record<string, Record<string, { operationId?: string }>> } =>
  JSON.parse(readFileSync(publishedDocumentFile(), 'utf8'));

describe('the web app types', () => {
  it('are what openapi-typescript makes of the current document (npm run web:types)', async () => {
    const committed = readFileSync(new URL(`../../../${WEB_TYPES_FILE}`, import.meta.url), 'utf8');
    expect(committed === (await webTypesOf(document()))).toBe(true);
  });

  it('come from a document whose every operation has its own operationId', () => {
    const ids = Object.values(document().paths).flatMap((item) =>
      Object.values(item).flatMap((op) => (op.operationId ? [op.operationId] : [])),
    );
    expect(ids.length).toBeGreaterThan(50);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
  });

  it('change when the document does (a field the document gains appears in them)', async () => {
    const changed = document() as unknown as { components: { schemas: { Chat: { properties: object } } } };
    changed.components.schemas.Chat.properties = {
      ...changed.components.schemas.Chat.properties,
      extra_field: { type: 'string' },
    };
    expect(await webTypesOf(changed as unknown as OpenApiDocument)).toContain('extra_field');
  });
});
