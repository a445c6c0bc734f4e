/**
 * The decision log (contract §5.5.6): every closing of a request appends one entry in the
 * closing's own transaction (`withDecision`), and `GET /decisions` pages it.
 */
import { BusyError } from '../errors.js';
import type { DecisionEntry } from '../model.js';
import { timeForWrite } from '../platform/deadline.js';
import type { Deadline } from '../platform/deadline.js';
import { backoff, retry } from '../platform/retry.js';
import type { GuardedItem } from '../store/db.js';
import { DecisionHeadMoved, appendItems, listDecisions, readHead } from '../store/decisions-repo.js';
import { canonicalJson, entryHash } from '../model/decision-chain.js';

/** An entry as its closing knows it: everything but its place in the chain. */
export type DecisionDraft = Omit<DecisionEntry, 'seq' | 'prev_hash' | 'hash'>;

/**
 * Runs `write` with the items that append `draft` to the log. When another closing took the next
 * number first (its transaction failed on the head, writing nothing), it reads the head again and
 * writes again; closings are a person's pace, so this is rare. Past the budget: 429, nothing written.
 */
export function withDecision<T>(
  draft: DecisionDraft,
  deadline: Deadline,
  write: (items: GuardedItem[]) => Promise<T>,
): Promise<T> {
  return retry(
    {
      attempts: 20,
      budgetMs: 5000,
      backoff: backoff.fullJitter(10, 200),
      retryable: (error) => error instanceof DecisionHeadMoved,
      mayRetry: () => timeForWrite(deadline),
      exhausted: () => new BusyError(),
    },
    async () => {
      const head = await readHead();
      const unhashed = { ...draft, seq: head.seq + 1, prev_hash: head.hash };
      const entry: DecisionEntry = { ...unhashed, hash: entryHash(unhashed) };
      return write(appendItems(entry, canonicalJson(entry), head));
    },
  );
}

/** GET /decisions: entries after `after`, ascending; `next` is the last one's seq, or null when none follow. */
export async function list(after: number, limit: number): Promise<{ data: DecisionEntry[]; next: number | null }> {
  const { entries, more } = await listDecisions(after, limit);
  return { data: entries, next: more ? entries[entries.length - 1]!.seq : null };
}
