/**
 * The web app's build (`npm run build:web`): web/ → web/dist, every file but index.html under
 * assets/ with a content hash (lib/web-policy.ts caches those for a year). No inline script or
 * style is emitted, so the page runs under the strict Content-Security-Policy of lib/web-policy.ts.
 */
import { defineConfig } from 'vite';

export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  // React's automatic JSX runtime through Vite's own transform (no plugin needed for a build).
  oxc: { jsx: { runtime: 'automatic' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    target: 'es2022',
    sourcemap: false,
    // Small files as data: URLs would still be allowed by the CSP, but keep every asset a file.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
});
