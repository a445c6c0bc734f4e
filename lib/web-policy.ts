/**
 * How the web app (web/) is served, declared once for both hosts: the stack's CloudFront
 * response-headers policy and cache rules (lib/constructs/web-hosting.ts) and `npm start`'s static
 * server (local/). A browser sees the same headers from either.
 */

/** Where `npm run build:web` writes the built app; `-c webDir=PATH` serves another build instead. */
export const WEB_BUILD_DIR = 'web/dist';

/** Vite puts every content-hashed file under this prefix: cached for a year, never revalidated. */
export const HASHED_ASSETS_PREFIX = '/assets/';
export const HASHED_ASSET_MAX_AGE_SECONDS = 365 * 24 * 3600;

/** Cache-Control of every file outside the hashed assets (index.html first): always revalidated. */
export const UNHASHED_CACHE_CONTROL = 'no-cache';
export const HASHED_CACHE_CONTROL = `public, max-age=${HASHED_ASSET_MAX_AGE_SECONDS}, immutable`;

/**
 * The Content-Security-Policy: no inline or foreign script, and the page may talk only to its own
 * origin (the API and the event stream live there). Images and media also from blob: and data:
 * (previews of files being attached, icons), and from the media bucket's origin, `mediaOrigin`: an
 * original over the function's inline limit (functions/core/media.ts INLINE_DOWNLOAD_MAX_BYTES) is
 * answered 307 to a presigned URL of the bucket, and a policy applies to a redirect's target too, so
 * without it no image or audio over 4 MB would show. Styles from the app's own CSS files only; for
 * another build (`-c webDir`, RELAY_WEB_DIR: `foreignBuild`) inline styles too, which such UIs set
 * (OpenGram's toasts and drawers are styled by `style` attributes and injected `<style>`): a style
 * cannot run code, and scripts stay limited to the origin's files either way.
 */
export interface WebPolicyOptions {
  /** The build served is not ours (web/dist): allow `'unsafe-inline'` styles, never scripts. */
  foreignBuild?: boolean;
}

export function contentSecurityPolicy(mediaOrigin: string, options: WebPolicyOptions = {}): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    options.foreignBuild ? "style-src 'self' 'unsafe-inline'" : "style-src 'self'",
    `img-src 'self' blob: data: ${mediaOrigin}`,
    `media-src 'self' blob: ${mediaOrigin}`,
    "font-src 'self'",
    "connect-src 'self'",
    "worker-src 'self'",
    "manifest-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * The path on the app's origin that takes an upload session's form POST and hands it to the media
 * bucket, so the page uploads large files under `connect-src 'self'` (docs/architecture.md "Large files"): the
 * local runtime forwards it to its S3; the session route gives it to pages of this origin only.
 */
export const MEDIA_UPLOAD_PATH = '/media-upload';

/**
 * The relay's standalone sign-in page (web/public/relay-sign-in.*): served whatever UI is deployed,
 * so a person using another static UI (`-c webDir`, RELAY_WEB_DIR; OpenGram's, with an empty
 * bootstrap secret) can get the session cookie. Our build copies web/public, so it has them; beside
 * another build, each file the build lacks is served from SIGN_IN_SOURCE_DIR (the stack deploys
 * them with it, `npm start` falls back to them), with the no-cache of every unhashed file.
 */
export const SIGN_IN_PAGE = '/relay-sign-in.html';
export const SIGN_IN_FILES = ['relay-sign-in.html', 'relay-sign-in.js', 'relay-sign-in.css'] as const;
/** Where the sign-in files live, relative to the project's root. */
export const SIGN_IN_SOURCE_DIR = 'web/public';

export const HSTS_MAX_AGE_SECONDS = 2 * 365 * 24 * 3600;
export const REFERRER_POLICY = 'same-origin';

/** Every header the app's responses carry, as a browser sees them (arguments: contentSecurityPolicy). */
export const webSecurityHeaders = (
  mediaOrigin: string,
  options: WebPolicyOptions = {},
): Readonly<Record<string, string>> => ({
  'content-security-policy': contentSecurityPolicy(mediaOrigin, options),
  'strict-transport-security': `max-age=${HSTS_MAX_AGE_SECONDS}; includeSubDomains`,
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': REFERRER_POLICY,
});

/** A last path segment that names a file: it ends in an extension. */
export const FILE_NAME_PATTERN = /\.[A-Za-z0-9]+$/;

/** The page every route of the app is answered with. */
export const APP_ENTRY = '/index.html';

/**
 * The SPA fallback: a path that names no file (no extension in its last segment) is a route of the
 * app and gets index.html; paths under /api never reach the app's host. The stack's CloudFront
 * Function applies the same pattern (lib/constructs/web-hosting.ts spaFallbackCode; a test runs both
 * on one table of paths).
 */
export const isAppRoute = (path: string): boolean => !FILE_NAME_PATTERN.test(path.split('/').pop() ?? '');
