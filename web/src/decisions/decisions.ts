/**
 * The decision log in the query cache (GET /decisions, §5.5.6). The log only grows, and the API
 * reads it forwards (`after` a seq), so the page reads it once from the start, in pages of 500,
 * and from then on only the entries after the last one it holds (when a request closes, and when
 * the stream opens again). Newest first is the held entries read backwards. Verify reads the whole
 * log again, from entry 1, so it checks what the service serves now, not the page's copy.
 * What this costs: one read of every entry per page load (about 500 entries a request), and the
 * whole log held in the tab; the API has no backwards read to show only the newest.
 */
import { useQuery } from '@tanstack/react-query';
import { api } from '../api/client';
import { keys, queryClient, reread } from '../api/query-client';
import type { DecisionEntry, EventEnvelope } from '../api/types';
import { live } from '../live/events';

const PAGE = 500;

export interface Log {
  /** Ascending seq, as the API gave them. */
  entries: DecisionEntry[];
}

/** The entries after `held` (all of them without it), appended to it. */
export async function readLog(held: readonly DecisionEntry[] = []): Promise<Log> {
  const entries = [...held];
  let after = entries.at(-1)?.seq ?? 0;
  for (;;) {
    const page = await api.decisions({ after, limit: PAGE });
    entries.push(...page.data);
    if (page.next === null || page.data.length === 0) break;
    after = page.next;
  }
  return { entries };
}

export function useDecisions() {
  return useQuery({
    queryKey: keys.decisions(),
    queryFn: async () => {
      await live.ready();
      return readLog(queryClient.getQueryData<Log>(keys.decisions())?.entries);
    },
  });
}

/** The whole log read afresh (Verify), which also replaces the page's copy. */
export async function rereadWholeLog(): Promise<Log> {
  const log = await readLog();
  queryClient.setQueryData(keys.decisions(), log);
  return log;
}

/** A closing appends an entry: read what follows (only if the log is held; the view reads it when shown). */
export function applyDecisionEvent(event: EventEnvelope): void {
  if (event.type !== 'request.resolved' && event.type !== 'request.cancelled') return;
  void reread(keys.decisions());
}

/** JSON Lines, oldest first: one entry a line, as JSON.stringify writes what the API sent. */
export const jsonLines = (entries: readonly DecisionEntry[]): string =>
  entries.map((entry) => `${JSON.stringify(entry)}\n`).join('');

/** Hands the log to the browser as a download, `decisions-<date>.jsonl`. */
export function download(entries: readonly DecisionEntry[]): void {
  const blob = new Blob([jsonLines(entries)], { type: 'application/jsonl' });
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = `decisions-${new Date().toISOString().slice(0, 10)}.jsonl`;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
