/**
 * Tag suggestions (contract §5.8) and the catalog's deferred adjustments (§2.7): the parts a
 * chat write with more tag changes than its transaction holds leaves to apply once it has
 * committed (store/tags-repo.ts).
 */
import type { Deadline } from '../platform/deadline.js';
import { NO_DEADLINE } from '../platform/deadline.js';
import { logger } from '../platform/logger.js';
import { retry } from '../platform/retry.js';
import type { RetryPolicy } from '../platform/retry.js';
import { applyPart, pendingParts, readPart, tagsWithPrefix } from '../store/tags-repo.js';
import type { CatalogPart, TagAdjustment, TagEntry } from '../store/tags-repo.js';
import { asciiLower } from '../store/keys.js';

export async function suggest(q: string | undefined, limit: number): Promise<TagEntry[]> {
  const prefix = q?.trim() ?? '';
  if (prefix === '') return [];
  const wanted = asciiLower(prefix);
  // The key range can also match a longer prefix that runs into the key's separator; check exactly.
  const entries = (await tagsWithPrefix(prefix)).filter((e) => asciiLower(e.name).startsWith(wanted));
  entries.sort((a, b) => b.usage_count - a.usage_count || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return entries.slice(0, limit);
}

/** +1 for each tag `after` has and `before` lacks, -1 for each tag it dropped (§2.7). */
export function adjustmentsBetween(before: readonly string[], after: readonly string[]): TagAdjustment[] {
  const had = new Set(before);
  const has = new Set(after);
  return [
    ...after.filter((t) => !had.has(t)).map((name): TagAdjustment => ({ name, delta: 1 })),
    ...before.filter((t) => !has.has(t)).map((name): TagAdjustment => ({ name, delta: -1 })),
  ];
}

/**
 * A part's apply in the request: any failure is tried again at once, three tries in all; a
 * part that still fails is left to the sweeper (which runs every minute), not waited for.
 */
const APPLY_IN_REQUEST: RetryPolicy = {
  attempts: 3,
  backoff: () => 0,
  retryable: () => true,
};

/**
 * Applies the parts of a chat write that has committed, all at once (they touch distinct
 * tags). Never throws: the write is done, and a part that still fails stays for the sweeper,
 * so the catalog lags by that part for about a minute, and is never wrong for good.
 */
export async function applyParts(parts: readonly CatalogPart[], deadline: Deadline): Promise<void> {
  await Promise.all(
    parts.map((part) =>
      retry(APPLY_IN_REQUEST, () => applyPart(part, deadline)).catch((error: unknown) => {
        logger.warn('tag catalog part left to the sweeper', { part: part.key, error });
      }),
    ),
  );
}

/** A part younger than this may still be being applied by its own request. */
export const SWEEP_AFTER_MS = 30_000;
/** Parts applied per sweep run at most (one transaction each); the next run takes the rest. */
const SWEEP_BATCH = 100;

/**
 * The sweeper's work (a job: no deadline): applies parts older than `afterMs` that their request
 * left behind (it crashed, or its applies kept failing). Safe beside any other applier: each part
 * counts once. Cost when idle: one Query.
 */
export async function sweepCatalogParts(afterMs = SWEEP_AFTER_MS, now = Date.now()): Promise<number> {
  let applied = 0;
  for (const key of await pendingParts(new Date(now - afterMs).toISOString(), SWEEP_BATCH)) {
    try {
      const part = await readPart(key);
      if (part && (await applyPart(part, NO_DEADLINE))) applied++;
    } catch (error) {
      // The next run tries it again.
      logger.warn('tag sweep could not apply a catalog part', { part: key, error });
    }
  }
  return applied;
}
