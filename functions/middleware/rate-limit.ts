/**
 * Write rate limiting (contract §1.12), after authentication, before validation.
 *
 * The window's counter is shared by every function instance (store/rate-limit-repo.ts), but an
 * instance does not write it per request: it leases a block of the window's writes (a tenth
 * of the limit, at least 1) and spends it locally, so an agent streaming chunks through one
 * warm instance costs one counter write per block or per window, not one per request. Once the
 * shared counter is full, the instance answers 429 until the window ends without writing.
 * The limit is never exceeded; it is approximate on the strict side: a client spread over
 * several instances may get 429 up to (block - 1) writes early per other instance holding an
 * unspent block. With a limit below 20 the block is 1 write, which is the exact per-request count.
 */
import { RateLimitedError } from '../errors.js';
import { rateLimitSettings } from '../platform/env.js';
import { logger } from '../platform/logger.js';
import { cameThroughEdge } from './origin-verify.js';
import { bookkeeping } from '../store/db.js';
import { leaseWrites } from '../store/rate-limit-repo.js';
import type { HttpEvent, HttpMiddleware } from './types.js';
import { header } from './types.js';

const usable = (v: string | undefined) => {
  const value = v?.trim();
  return value && value.toLowerCase() !== 'unknown' ? value : undefined;
};

/**
 * The address in CloudFront's CloudFront-Viewer-Address header, which is the address and the
 * source port joined by a colon ("198.51.100.10:46532", "2001:db8::8a2e:370:7334:46532").
 */
export function viewerAddressOf(value: string | undefined): string | undefined {
  const text = usable(value);
  const colon = text?.lastIndexOf(':') ?? -1;
  if (!text || colon <= 0 || !/^\d+$/.test(text.slice(colon + 1))) return undefined;
  return usable(text.slice(0, colon).replace(/^\[(.*)\]$/, '$1'));
}

/**
 * The client's bucket (contract §1.12): the client address as the platform sees it, forwarded
 * headers only when trusted and the platform knows no address.
 *
 * In the deployed stack the platform is CloudFront in front of API Gateway, whose source IP is
 * then an edge server's address, shared by every viewer of that edge; CloudFront reports the
 * viewer's own address in CloudFront-Viewer-Address (forwarded by the distribution's origin
 * request policy). That header is believed only on a request carrying the origin-verify secret
 * (middleware/origin-verify.ts): anyone can send it to the API's own endpoint. Otherwise, and in the
 * local runtime, the source IP.
 */
export async function clientOf(event: HttpEvent, trustProxyHeaders: boolean): Promise<string> {
  const viewer = viewerAddressOf(header(event, 'cloudfront-viewer-address'));
  try {
    if (viewer && (await cameThroughEdge(event))) return viewer;
  } catch (error) {
    // The secret could not be read: a coarser bucket (the edge's address) rather than a 500.
    logger.warn('origin-verify secret unreadable: rate limit keyed on the source IP', { error });
  }
  const ip = usable(event.requestContext?.http?.sourceIp);
  if (ip) return ip;
  if (trustProxyHeaders) {
    const forwarded =
      usable(header(event, 'x-forwarded-for')?.split(',')[0]) ??
      usable(header(event, 'x-real-ip')) ??
      usable(header(event, 'cf-connecting-ip'));
    if (forwarded) return forwarded;
  }
  return 'instance';
}

export type RateDecision = { allowed: true } | { allowed: false; retryAfterMs: number };

/** The most writes one lease asks for (less when the window has less than ten such blocks left). */
export const blockSize = (max: number): number => Math.max(1, Math.floor(max / 10));

interface Allowance {
  /** End of the shared window these writes belong to (epoch ms). */
  windowEnd: number;
  /** Leased writes not yet spent. */
  left: number;
  /** The shared counter had nothing left for this window. */
  full: boolean;
  /** What the shared counter had left after this instance's last lease (sizes its next one). */
  counterLeft?: number | undefined;
}

const MAX_CLIENTS = 10_000;

/**
 * One instance's allowances per client. Exported as a class so tests can play several
 * instances against one table.
 */
export class WriteAllowances {
  private readonly allowances = new Map<string, Allowance>();
  private readonly leasing = new Map<string, Promise<void>>();

  async admit(client: string, now: number, max: number, windowMs: number): Promise<RateDecision> {
    for (;;) {
      const allowance = this.allowances.get(client);
      if (allowance && now < allowance.windowEnd) {
        if (allowance.left > 0) {
          allowance.left--;
          return { allowed: true };
        }
        if (allowance.full) return { allowed: false, retryAfterMs: allowance.windowEnd - now };
      }
      // One lease at a time per client: concurrent requests wait for it, then spend from it.
      const pending = this.leasing.get(client);
      if (pending) {
        await pending;
        continue;
      }
      let failure: { error: unknown } | undefined;
      // Unanswered in time, a lease answers 429 (store/db.ts bookkeeping): DynamoDB is overloaded.
      const known = allowance && now < allowance.windowEnd ? allowance.counterLeft : undefined;
      const settled = bookkeeping(() => leaseWrites(client, now, max, windowMs, blockSize(max), known))
        .then(
          (lease) => {
            if (this.allowances.size >= MAX_CLIENTS) this.allowances.clear();
            this.allowances.set(client, {
              windowEnd: lease.windowEnd,
              left: lease.granted,
              full: lease.granted === 0,
              counterLeft: lease.left,
            });
          },
          (error: unknown) => {
            failure = { error };
          },
        )
        .finally(() => this.leasing.delete(client));
      this.leasing.set(client, settled);
      await settled;
      if (failure) throw failure.error;
    }
  }
}

const instanceAllowances = new WriteAllowances();

export function rateLimit(): HttpMiddleware {
  return {
    before: async (request) => {
      if (request.event.requestContext?.http?.method === 'OPTIONS') return;
      const { max, windowMs, trustProxyHeaders } = rateLimitSettings();
      const client = await clientOf(request.event, trustProxyHeaders);
      const decision = await instanceAllowances.admit(client, Date.now(), max, windowMs);
      if (!decision.allowed) throw new RateLimitedError(Math.max(1, Math.ceil(decision.retryAfterMs / 1000)));
    },
  };
}
