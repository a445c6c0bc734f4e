/**
 * The order of a chat's messages, and how a freshly read newest page joins what the page already
 * shows. A read answered before some live events arrived must not undo them: a message created
 * after it was served, or chunks appended to a stream since, would otherwise vanish from view
 * until the next read (the list answers as of its read; the events keep coming meanwhile).
 */

/** What ordering and joining look at (a Message has them). */
interface Ordered {
  id: string;
  created_at: string;
  updated_at: string;
}

/** Oldest first: by created_at, then by id (the service's order). */
export function compareMessages(a: Ordered, b: Ordered): number {
  if (a.created_at !== b.created_at) return a.created_at < b.created_at ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * `shown` with the newest page read (`newest`, oldest first) in place of the part it covers:
 * older messages already read stay (unless `first`: nothing older is known yet); a message in
 * both is the page's, unless the shown one was updated later (live chunks, a completion, since
 * the read); messages newer than the whole page (created by events after the read) stay after it.
 */
export function withNewestPage<M extends Ordered>(shown: readonly M[], newest: readonly M[], first: boolean): M[] {
  const oldest = newest[0];
  const latest = newest.at(-1);
  const byId = new Map(shown.map((m) => [m.id, m]));
  const onPage = new Set(newest.map((m) => m.id));
  const older = first || !oldest ? [] : shown.filter((m) => !onPage.has(m.id) && compareMessages(m, oldest) < 0);
  const page = newest.map((m) => {
    const live = byId.get(m.id);
    return live && live.updated_at > m.updated_at ? live : m;
  });
  const after = shown.filter((m) => !onPage.has(m.id) && (!latest || compareMessages(m, latest) > 0));
  return [...older, ...page, ...after];
}
