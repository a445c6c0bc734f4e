/**
 * A second local runtime, in a process of its own, for the SSE idle-cost scenario (events.ts).
 * Handlers read their environment once per process (functions/platform/env.ts), so a stream
 * lifetime other than the bench server's needs another process. The bench starts this with
 * its own environment (the same DynamoDB Local and table, EXPOSE_USAGE_HEADERS=1) plus
 * SSE_LIFETIME_MS; it prints `{"url": …}` on one line once listening, and exits when its
 * stdin closes (the bench ended or died) or on SIGTERM / SIGINT.
 */
import { startLocalApi } from '../../local/server.js';

const api = await startLocalApi(0);
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
