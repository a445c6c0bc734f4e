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
import { rateLimitSettings } from '../platform/config.js';
import { leaseWrites } from '../store/rate-limit-repo.js';
import type { HttpEvent, HttpMiddleware } from './types.js';
import { header } from './types.js';

const usable = (v: string | undefined) => {
  const value = v?.trim();
  return value && value.toLowerCase() !== 'unknown' ? value : undefined;
};

/** The client's bucket: the platform's source IP; forwarded headers only when trusted and no IP is known. */
export function clientOf(event: HttpEvent, trustProxyHeaders: boolean): string {
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

/** The writes one lease asks for. */
export const blockSize = (max: number): number => Math.max(1, Math.floor(max / 10));

interface Allowance {
  /** End of the shared window these writes belong to (epoch ms). */
  windowEnd: number;
  /** Leased writes not yet spent. */
  left: number;
  /** The shared counter had nothing left for this window. */
  full: boolean;
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
      const settled = leaseWrites(client, now, max, windowMs, blockSize(max))
        .then(
          (lease) => {
            if (this.allowances.size >= MAX_CLIENTS) this.allowances.clear();
            this.allowances.set(client, { windowEnd: lease.windowEnd, left: lease.granted, full: lease.granted === 0 });
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
      const client = clientOf(request.event, trustProxyHeaders);
      const decision = await instanceAllowances.admit(client, Date.now(), max, windowMs);
      if (!decision.allowed) throw new RateLimitedError(Math.max(1, Math.ceil(decision.retryAfterMs / 1000)));
    },
  };
}
