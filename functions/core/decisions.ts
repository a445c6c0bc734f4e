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
import type { DecisionHead } from '../store/decisions-repo.js';
import { canonicalJson, entryHash } from '../model/decision-chain.js';

/** An entry as its closing knows it: everything but its place in the chain. */
export type DecisionDraft = Omit<DecisionEntry, 'seq' | 'prev_hash' | 'hash'>;

/**
 * Runs `write` with the items that append `draft` to the log. The head orders every closing of
 * the instance: when another closing took the next number first (its transaction failed on the
 * head, writing nothing), this one writes again after the head it was shown. Closings of one
 * process take turns at the head (`inTurn`): the local runtime runs every function in one process,
 * and a container that serves several invocations at once would race itself otherwise; closings
 * of different containers retry. Tries go on while the invocation has time for a write (10 s at
 * most outside one); then 429, nothing written.
 */
export function withDecision<T>(
  draft: DecisionDraft,
  deadline: Deadline,
  write: (items: GuardedItem[]) => Promise<T>,
): Promise<T> {
  return inTurn(() => {
    let known: DecisionHead | undefined;
    return retry(
      {
        attempts: Infinity,
        budgetMs: 10_000,
        backoff: backoff.fullJitter(5, 100),
        retryable: (error) => {
          if (!(error instanceof DecisionHeadMoved)) return false;
          known = error.head;
          return true;
        },
        mayRetry: () => timeForWrite(deadline),
        exhausted: () => new BusyError(),
      },
      async () => {
        const head = known ?? (await readHead());
        known = undefined;
        const unhashed = { ...draft, seq: head.seq + 1, prev_hash: head.hash };
        const entry: DecisionEntry = { ...unhashed, hash: entryHash(unhashed) };
        return write(appendItems(entry, canonicalJson(entry), head));
      },
    );
  });
}

/** The last turn taken in this process: each closing's head step starts after the one before ends. */
let lastTurn: Promise<unknown> = Promise.resolve();

function inTurn<T>(step: () => Promise<T>): Promise<T> {
  const turn = lastTurn.then(step, step);
  lastTurn = turn.catch(() => undefined);
  return turn;
}

/** GET /decisions: entries after `after`, ascending; `next` is the last one's seq, or null when none follow. */
export async function list(after: number, limit: number): Promise<{ data: DecisionEntry[]; next: number | null }> {
  const { entries, more } = await listDecisions(after, limit);
  return { data: entries, next: more ? entries[entries.length - 1]!.seq : null };
}
