/**
 * The search index writer, run locally: a tail of the event log feeds the stream consumer AWS runs,
 * functions/jobs/search-index.ts, with the records its mapping lets through (lib/stream-mappings.ts:
 * new message events that can carry searchable text, batches of up to 100; local/stream-tail.ts).
 * One batch at a time (the index has one writer, as the function's reserved concurrency of 1
 * makes it in AWS). Where it got to is kept in the table (search-repo.ts tail position), so events
 * written just before a stop are indexed on the next start, and a data folder from before search
 * existed is indexed from the log's oldest retained event (the mapping's TRIM_HORIZON).
 */
import { handler } from '../functions/jobs/search-index.js';
import { getTailPosition, setTailPosition } from '../functions/store/search-repo.js';
import { tableStreamMappings } from '../lib/stream-mappings.js';
import { startStreamTail } from './stream-tail.js';

export const startLocalSearchTail = (): { stop(): Promise<void> } =>
  startStreamTail({
    mapping: tableStreamMappings.searchIndex,
    handler,
    checkpoint: { load: getTailPosition, save: setTailPosition },
  });
