/**
 * The local stand-in for the search index writer's stream consumer (functions/jobs/search-index.ts):
 * a tail of the event log (local/event-tail.ts) hands each poll's events to the same core code
 * (core/search.ts indexEvents), one batch at a time (the index has one writer). Where it got to
 * is kept in the table, so events written just before a stop are indexed on the next start, and
 * a data folder from before search existed is indexed from the log's oldest retained event.
 */
import * as Search from '../functions/core/search.js';
import { getTailPosition, setTailPosition } from '../functions/store/search-repo.js';
import { startLogTail } from './event-tail.js';

export function startLocalSearchTail(): { stop(): Promise<void> } {
  return startLogTail({
    name: 'search index tail',
    start: async () => (await getTailPosition()) + 1,
    consume: async (events, through) => {
      await Search.indexEvents(events);
      await setTailPosition(through);
    },
  });
}
