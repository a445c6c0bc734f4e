import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from '@jest/globals';
import { useApi } from '../../support/api.js';

const api = useApi({
  config: {
    security: { instanceSecretEnabled: true, instanceSecret: 'sekrit', readEndpointsRequireInstanceSecret: true },
  },
});

const renderer = readFileSync(createRequire(import.meta.url).resolve('swagger-ui-dist/swagger-ui-bundle.js'), 'utf8');

describe('GET /api/v1/reference', () => {
  it('answers an HTML page without the secret, even when reads require it (public, §14 item 31)', async () => {
    const res = await api.get('/api/v1/reference');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.text).toMatch(/^<!doctype html>/);
  });

  it('inlines the renderer and loads no script, stylesheet or other resource from a URL', async () => {
    const { text } = await api.get('/api/v1/reference');
    // The renderer's whole browser bundle is inside the page.
    expect(text).toContain(renderer.slice(0, 2_000));
    expect(text).toContain(renderer.slice(-2_000));
    expect(text).toContain('SwaggerUIBundle({');
    // No element fetches anything: every script is inline, no stylesheet link, no src/href to a URL.
    expect(text).not.toMatch(/<script[^>]*\ssrc=/i);
    // The one link is the page's icon, an empty data: URL (no request for /favicon.ico).
    expect(text.match(/<link[^>]*>/gi)).toEqual(['<link rel="icon" href="data:,">']);
    const markup = text.replace(/<script>[\s\S]*?<\/script>|<style>[\s\S]*?<\/style>/g, '');
    expect(markup.match(/(src|href)=\S*/gi)).toEqual(['href="data:,">']);
    expect(text).toContain('validatorUrl: null');
  });

  it('embeds the same document GET /api/v1/doc serves', async () => {
    const [page, doc] = await Promise.all([api.get('/api/v1/reference'), api.get('/api/v1/doc')]);
    const embedded = /SwaggerUIBundle\(\{ spec: (\{.*\}), dom_id/.exec(page.text)?.[1];
    expect(embedded).toBeDefined();
    expect(JSON.parse(embedded!)).toEqual(doc.body);
    // `<` is escaped, so a description cannot end the script element.
    expect(embedded).not.toContain('<');
  });

  it("runs under a CSP allowing exactly its inline scripts and stylesheet by hash, and can't be framed", async () => {
    const res = await api.get('/api/v1/reference');
    const policy = res.headers.get('content-security-policy') ?? '';
    const directives = new Map(
      policy.split(';').map((d) => {
        const [name, ...values] = d.trim().split(/\s+/);
        return [name!, values] as const;
      }),
    );
    const hash = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
    const scripts = [...res.text.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => hash(m[1]!));
    const styles = [...res.text.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => hash(m[1]!));
    expect(scripts).toHaveLength(2);
    expect(styles).toHaveLength(1);
    expect(Object.fromEntries(directives)).toEqual({
      'default-src': ["'none'"],
      'script-src': scripts,
      'style-src': styles,
      'img-src': ["'self'", 'data:'],
      'connect-src': ["'self'"],
      'base-uri': ["'none'"],
      'form-action': ["'none'"],
      'frame-ancestors': ["'none'"],
    });
    expect(policy).not.toMatch(/unsafe-inline|unsafe-eval/);
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });
});
