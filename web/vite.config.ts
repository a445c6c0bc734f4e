/**
 * The web app's build (`npm run build:web`): web/ → web/dist, every file but index.html under
 * assets/ with a content hash (lib/web-policy.ts caches those for a year). No inline script or
 * style is emitted, so the page runs under the strict Content-Security-Policy of lib/web-policy.ts.
 */
import { defineConfig } from 'vite';

// `npx vite web` (a dev server with live reload) and `npx vite preview web` forward the API to a running
// `npm start` (RELAY_API, default http://127.0.0.1:3000), keeping the page's own Host so the session
// cookie's same-origin check holds.
const api = { '/api': { target: process.env.RELAY_API ?? 'http://127.0.0.1:3000', changeOrigin: false } };

export default defineConfig({
  server: { proxy: api },
  preview: { proxy: api },
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
    rollupOptions: {
      // TanStack Query marks its React modules "use client" (for server-component bundlers); a
      // browser-only build has nothing to keep of it.
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
    },
  },
});
