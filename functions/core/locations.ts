/**
 * Where an item lives (its chat and sort key) never changes once it exists, so lookups by id go
 * through a per-container cache: a warm function finds a message or request without reading
 * its pointer item again.
 */
import { isId } from '../platform/ids.js';

const MAX_ENTRIES = 10_000;

/** A cached `locate`: 404s (`notFound`) for malformed or unknown ids, remembers the rest. */
export function locationCache<L>(
  locate: (id: string) => Promise<L | undefined>,
  notFound: (id: string) => Error,
): (id: string) => Promise<L> {
  const cache = new Map<string, L>();
  return async (id) => {
    let loc = cache.get(id);
    if (!loc) {
      loc = isId(id) ? await locate(id) : undefined;
      if (!loc) throw notFound(id);
      if (cache.size > MAX_ENTRIES) cache.clear();
      cache.set(id, loc);
    }
    return loc;
  };
}
