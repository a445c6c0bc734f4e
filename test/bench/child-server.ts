/**
 * A second local runtime, in a process of its own, for scenarios that need settings other
 * than the bench server's: the SSE idle-cost phase (events.ts: SSE_LIFETIME_MS) and dispatch
 * (dispatch.ts: its own INSTANCE_CONFIG, and its own in-process queues). Handlers read their
 * environment once per process (functions/platform/env.ts), so other settings need another
 * process. child.ts starts this with the bench's environment (the same DynamoDB Local and
 * table, EXPOSE_USAGE_HEADERS=1) plus the scenario's variables; it prints `{"url": …}` on one
 * line once listening, and exits when its stdin closes (the bench ended or died) or on
 * SIGTERM / SIGINT.
 */
import { startLocalApi } from '../../local/server.js';

// The bench server is the search index's one writer (in AWS a single stream consumer): a second
// writer on the same table and bucket would merge and retire segments under the first one.
const api = await startLocalApi(0, { search: false });
process.stdout.write(`${JSON.stringify({ url: api.url })}\n`);

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  void api
    .close()
    .catch(() => undefined)
    .finally(() => process.exit(0));
};
process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.resume();
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
