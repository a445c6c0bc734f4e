/**
 * What a well-behaved client does with a 429 (RATE_LIMIT_ERROR, docs/architecture.md "Busy chats"): waits the
 * Retry-After seconds (a fraction of them, jittered, to keep tests short) and sends the same
 * request again. Every other answer is final.
 */
import { sleep } from '../../functions/platform/retry.js';
import type { Response } from './api.js';

export interface Retried<T> {
  res: Response<T>;
  /** 429 answers before the final one. */
  busy: number;
}

export async function retryingBusy<T = any>(send: () => Promise<Response<T>>, attempts = 8): Promise<Retried<T>> {
  for (let busy = 0; ; busy++) {
    const res = await send();
    if (res.status !== 429 || busy + 1 >= attempts) return { res, busy };
    const seconds = Number(res.headers.get('retry-after') ?? 1);
    // Time is the behavior: the wait the 429's Retry-After asks for.
    await sleep((0.25 + Math.random() * 0.5) * seconds * 1000);
  }
}
