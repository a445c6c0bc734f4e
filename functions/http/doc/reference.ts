/**
 * GET /api/v1/reference: an HTML reference of the OpenAPI document (contract §14 item 31),
 * public. Swagger UI's browser bundle and stylesheet are inlined with the document itself, so
 * the page loads nothing from anywhere else (no CDN, no second request). They are read from
 * the swagger-ui-dist package: node_modules locally, the copy in the function's asset on Lambda
 * (api-function.ts `apiDocument: 'reference'`).
 *
 * The page is on the API's origin (the app's, behind one domain), so it runs under a strict
 * Content-Security-Policy: its two scripts and its stylesheet are allowed by their SHA-256
 * hashes, nothing else runs, loads or frames it (`frame-ancestors 'none'`, X-Frame-Options).
 * "Try it out" calls the API on the same origin (`connect-src 'self'`); the stylesheet's icons
 * are data: URLs, and so is the page's own (an empty one: no request for /favicon.ico).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { http } from '../../middleware/http.js';
import { bytes } from '../../model/replies.js';
import { apiDocument } from './document.js';

export const schemas = { replies: { 200: bytes('An HTML reference page of this document.', 'text/html') } };

/** Inline text must not close its <script>/<style> element early. */
const inline = (text: string): string => text.replace(/<\/(script|style)/gi, '<\\/$1');

let page: Promise<{ html: Buffer; policy: string }> | undefined;

async function render(): Promise<{ html: Buffer; policy: string }> {
  const dist = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const script = readFileSync(join(dist, 'swagger-ui-bundle.js'), 'utf8');
  const style = readFileSync(join(dist, 'swagger-ui.css'), 'utf8');
  const document = await apiDocument();
  // `<` escaped in the JSON so no string in the document can end the script element.
  const spec = JSON.stringify(document).replaceAll('<', '\\u003c');
  const title = String((document.info as { title?: unknown }).title ?? 'API reference').replace(/[<&]/g, '');
  const css = inline(style);
  const bundle = inline(script);
  const start = `
window.ui = SwaggerUIBundle({ spec: ${spec}, dom_id: '#reference', deepLinking: true, validatorUrl: null });
`;
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="icon" href="data:,">
<style>${css}</style>
</head>
<body>
<div id="reference"></div>
<script>${bundle}</script>
<script>${start}</script>
</body>
</html>
`;
  return { html: Buffer.from(html, 'utf8'), policy: policyFor([bundle, start], [css]) };
}

/** A CSP source for an inline element's exact text (CSP Level 2 hashes, UTF-8). */
const hashOf = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

function policyFor(scripts: string[], styles: string[]): string {
  return [
    "default-src 'none'",
    `script-src ${scripts.map(hashOf).join(' ')}`,
    `style-src ${styles.map(hashOf).join(' ')}`,
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export const handler = http('doc/reference', schemas, async () => {
  page ??= render();
  page.catch(() => (page = undefined));
  const { html, policy } = await page;
  return {
    status: 200,
    binary: html,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': policy,
      'x-frame-options': 'DENY',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
    },
  };
});
