/**
 * GET /api/v1/reference: an HTML reference of the OpenAPI document (contract §14 item 31),
 * public. Swagger UI's browser bundle and stylesheet are inlined with the document itself, so
 * the page loads nothing from anywhere else (no CDN, no second request). They are read from
 * the swagger-ui-dist package: node_modules locally, the copy in the function's asset on Lambda
 * (api-function.ts `apiDocument: 'reference'`).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { http } from '../../middleware/http.js';
import { apiDocument } from './document.js';

export const schemas = {};

/** Inline text must not close its <script>/<style> element early. */
const inline = (text: string): string => text.replace(/<\/(script|style)/gi, '<\\/$1');

let page: Promise<Buffer> | undefined;

async function render(): Promise<Buffer> {
  const dist = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const script = readFileSync(join(dist, 'swagger-ui-bundle.js'), 'utf8');
  const style = readFileSync(join(dist, 'swagger-ui.css'), 'utf8');
  const document = await apiDocument();
  // `<` escaped in the JSON so no string in the document can end the script element.
  const spec = JSON.stringify(document).replaceAll('<', '\\u003c');
  const title = String((document.info as { title?: unknown }).title ?? 'API reference').replace(/[<&]/g, '');
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>${inline(style)}</style>
</head>
<body>
<div id="reference"></div>
<script>${inline(script)}</script>
<script>
window.ui = SwaggerUIBundle({ spec: ${spec}, dom_id: '#reference', deepLinking: true, validatorUrl: null });
</script>
</body>
</html>
`;
  return Buffer.from(html, 'utf8');
}

export const handler = http('doc/reference', schemas, async () => {
  page ??= render();
  page.catch(() => (page = undefined));
  return {
    status: 200,
    binary: await page,
    headers: { 'content-type': 'text/html; charset=utf-8' },
  };
});
