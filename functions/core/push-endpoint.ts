/**
 * Push subscription checks (contract §5.10.1, §7.1): the endpoint must be an HTTPS URL whose
 * host passes the block-list (step 1: local names, private/loopback/link-local addresses in any
 * notation, userinfo) and then the allow-list of Web Push services (step 2). Pure: no I/O.
 *
 * The WHATWG URL parser already folds IPv4 notations (decimal 2130706433, octal 0177.0.0.1, hex
 * 0x7f.1) into dotted form and IPv6 into its bracketed compressed form ([::ffff:7f00:1] for
 * ::ffff:127.0.0.1), so the checks below read the parsed host only.
 */

export type EndpointCheck = { ok: true; endpoint: string } | { ok: false; field: 'endpoint'; message: string };
export type KeysCheck =
  | { ok: true; p256dh: string; auth: string }
  | { ok: false; field: 'keys' | 'keys.p256dh' | 'keys.auth'; message: string };

const refuse = (message: string): EndpointCheck => ({ ok: false, field: 'endpoint', message });
const NOT_ALLOWED = 'endpoint host is not allowed.';
const NOT_A_PROVIDER = 'endpoint host must be a supported Web Push provider.';

/** [first octet, prefix length, network as a 32-bit number] of the blocked IPv4 ranges. */
const BLOCKED_V4: readonly [number, number][] = [
  [0x0a000000, 8], // 10.0.0.0/8
  [0x7f000000, 8], // 127.0.0.0/8
  [0x00000000, 8], // 0.0.0.0/8
  [0xa9fe0000, 16], // 169.254.0.0/16
  [0xac100000, 12], // 172.16.0.0/12
  [0xc0a80000, 16], // 192.168.0.0/16
  [0x64400000, 10], // 100.64.0.0/10
];

/** The 32-bit value of a dotted IPv4 literal, or undefined if it is not a well-formed one. */
function ipv4Value(host: string): number | undefined {
  const parts = host.split('.');
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) return undefined;
  return parts.reduce((n, p) => n * 256 + Number(p), 0);
}

const blockedV4 = (value: number): boolean =>
  BLOCKED_V4.some(([network, bits]) => Math.floor(value / 2 ** (32 - bits)) === Math.floor(network / 2 ** (32 - bits)));

/** Digits and dots only: an IPv4 literal (the parser has already turned other notations into this). */
const looksLikeIpv4 = (host: string): boolean => /^[\d.]+$/.test(host);

/** The IPv4 part of an IPv4-mapped IPv6 address in either written form, else undefined. */
function mappedIpv4(v6: string): number | undefined {
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(v6);
  if (dotted) return ipv4Value(dotted[1]!);
  const hex = /^::ffff:([\da-f]{1,4}):([\da-f]{1,4})$/.exec(v6);
  if (hex) return parseInt(hex[1]!, 16) * 0x10000 + parseInt(hex[2]!, 16);
  return undefined;
}

function blockedIpv6(v6: string): boolean {
  if (v6 === '::' || v6 === '::1') return true;
  if (/^f[cd][\da-f]{0,2}:/.test(v6)) return true; // fc00::/7, unique-local
  if (/^fe[89ab][\da-f]?:/.test(v6)) return true; // fe80::/10, link-local
  const mapped = mappedIpv4(v6);
  return mapped !== undefined && blockedV4(mapped);
}

/** Step 1 (§7.1). */
function blocked(host: string): boolean {
  if (host === '') return true;
  if (host.startsWith('[')) return blockedIpv6(host.slice(1, -1));
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (host.endsWith('.local') || host.endsWith('.internal')) return true;
  if (!host.includes('.')) return true;
  if (looksLikeIpv4(host)) {
    const value = ipv4Value(host);
    return value === undefined || blockedV4(value);
  }
  return false;
}

/** Step 2 (§7.1): FCM exactly; Apple and Mozilla with any subdomain. */
const allowed = (host: string): boolean =>
  host === 'fcm.googleapis.com' ||
  host === 'push.apple.com' ||
  host.endsWith('.push.apple.com') ||
  host === 'push.services.mozilla.com' ||
  host.endsWith('.push.services.mozilla.com');

export function checkPushEndpoint(value: unknown): EndpointCheck {
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) {
    return refuse('endpoint is required.');
  }
  if (typeof value !== 'string') return refuse('endpoint must be a valid URL.');
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return refuse('endpoint must be a valid URL.');
  }
  if (url.protocol !== 'https:') return refuse('endpoint must use HTTPS.');
  // Credentials in the URL have no place in a push endpoint (and make look-alikes such as
  // https://fcm.googleapis.com@evil.example); the host compared is the parsed one, lower-cased.
  if (url.username !== '' || url.password !== '') return refuse(NOT_ALLOWED);
  const host = url.hostname.toLowerCase();
  if (blocked(host)) return refuse(NOT_ALLOWED);
  if (!allowed(host)) return refuse(NOT_A_PROVIDER);
  return { ok: true, endpoint: url.href };
}

export function checkPushKeys(value: unknown): KeysCheck {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, field: 'keys', message: 'keys must be an object with p256dh and auth.' };
  }
  const { p256dh, auth } = value as Record<string, unknown>;
  if (typeof p256dh !== 'string' || p256dh.trim() === '') {
    return { ok: false, field: 'keys.p256dh', message: 'keys.p256dh is required.' };
  }
  if (typeof auth !== 'string' || auth.trim() === '') {
    return { ok: false, field: 'keys.auth', message: 'keys.auth is required.' };
  }
  return { ok: true, p256dh: p256dh.trim(), auth: auth.trim() };
}
