/**
 * The web app's security headers as `npm start` sends them (lib/web-policy.ts webSecurityHeaders).
 * Its CSP names the local media bucket's origin, whose port is the emulator's own: read from the
 * CSP, checked to be a loopback origin other than the page's, and the whole set compared with it.
 */
import { expect } from '@jest/globals';
import { webSecurityHeaders } from '../../../lib/web-policy.js';
import type { WebPolicyOptions } from '../../../lib/web-policy.js';

/** The origin the CSP allows images from besides the page's own (the media bucket's). */
export function mediaOriginIn(csp: string): string {
  const img = csp.split(';').find((d) => d.trim().startsWith('img-src '));
  const origin = img?.trim().split(/\s+/).at(-1) ?? '';
  expect(origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  return origin;
}

/** `options`: another build than ours is served (RELAY_WEB_DIR): `{ foreignBuild: true }`. */
export function expectWebSecurityHeaders(
  headers: Record<string, string | string[] | undefined>,
  pageOrigin: string,
  options: WebPolicyOptions = {},
) {
  const origin = mediaOriginIn(String(headers['content-security-policy']));
  expect(origin).not.toBe(pageOrigin);
  for (const [name, value] of Object.entries(webSecurityHeaders(origin, options)))
    expect([name, headers[name]]).toEqual([name, value]);
}
