/**
 * The order of a chat's messages, and how a fresh read of its pages joins what the cache already
 * holds. A read answered before some live events arrived must not undo them: a message created
 * after it was served, or chunks appended to a stream since, would otherwise vanish from view
 * until the next read (the list answers as of its read; the events keep coming meanwhile).
 */

/** What ordering and joining look at (a Message has them). */
interface Ordered {
  id: string;
  created_at: string;
  updated_at: string;
}

/** Pages of a newest-first listing, newest page first (TanStack Query's infinite data). */
interface Pages<M> {
  pages: { data: M[] }[];
}

/** Oldest first: by created_at, then by id (the service's order). */
export function compareMessages(a: Ordered, b: Ordered): number {
  if (a.created_at !== b.created_at) return a.created_at < b.created_at ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * The query's structural sharing: `next` (a read, or a live patch of `held`) as the cache keeps
 * it. A message in both is the next one, unless the held one was updated later (live chunks, a
 * completion, since the read); a held message newer than everything `next` holds (created by an
 * event after the read) stays, at the front of the newest page.
 */
export function keepLive<M extends Ordered, D extends Pages<M>>(held: unknown, next: D): D {
  const before = held as D | undefined;
  if (!before?.pages || !next?.pages?.length) return next;
  const byId = new Map(before.pages.flatMap((page) => page.data.map((m) => [m.id, m] as const)));
  if (byId.size === 0) return next;
  const onPages = new Set(next.pages.flatMap((page) => page.data.map((m) => m.id)));
  const latest = next.pages[0]!.data[0];
  const after = [...byId.values()]
    .filter((m) => !onPages.has(m.id) && (!latest || compareMessages(m, latest) > 0))
    .sort((a, b) => compareMessages(b, a));
  let changed = after.length > 0;
  const pages = next.pages.map((page, p) => {
    const data = page.data.map((m) => {
      const live = byId.get(m.id);
      if (live && live.updated_at > m.updated_at) {
        changed = true;
        return live;
      }
      return m;
    });
    return p === 0 ? { ...page, data: [...after, ...data] } : { ...page, data };
  });
  return changed ? { ...next, pages } : next;
}
