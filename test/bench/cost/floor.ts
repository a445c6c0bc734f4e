/**
 * The floor of a workload's month: what CONTRACT.md and ARCHITECTURE.md force on any
 * implementation of this service, priced with the same table (prices.ts). It is a lower bound:
 * each line counts only what no code of ours could avoid, so a goal under a workload's floor
 * cannot be met without changing one of those two documents (issue 16 asks for this proof).
 *
 * What is forced, and by what:
 * - Every HTTP request passes CloudFront, API Gateway and one Lambda invocation: the REST API is
 *   API Gateway before one Lambda per endpoint and the event stream a response-streaming
 *   function URL (ARCHITECTURE.md, "One picture"), and clients take one base URL for both
 *   (CONTRACT.md §1.1, §6.4), which only a CloudFront distribution joins (lib/constructs/edge.ts).
 *   The number of requests is the workload's own (one per chunk: §5.4.3 takes one delta per
 *   request) and, for a claim pump, one per `waitMs` + pause: the fewest a held long-poll allows
 *   (answering an empty claim sooner costs more: a held second at 128 MB is $1.7e-6, a request
 *   $2.2e-6).
 * - Held connections run a Lambda at its smallest size (128 MB) for every second they are open:
 *   an SSE connection is held so events arrive "within about one second" (§6.4), a claim
 *   long-polls up to `waitMs` (§4.4.7) in its function.
 * - Writes: a chunk is its own item (ARCHITECTURE.md, "Cost that does not grow with size") and
 *   its ephemeral event goes through the event log (ARCHITECTURE.md, "Events and SSE"): 2 WRU.
 *   A write that changes an entity and emits a persisted event commits both in one transaction
 *   ("Atomic mutations"): 2 items × 2 = 4 WRU (message create, request create, resolve), at
 *   least, as an item under 1 KB; a completed reply's item holds its final text (`content_final`,
 *   §5.4.4: SIZES.finishedReply, 5 KB, 1 WRU per KB), so its transaction is at least 2 × 5 for the
 *   message and 2 for the event (the event's `finalText` could be joined on read instead: not
 *   counted). A closing of a request also appends its decision log entry in that transaction
 *   (§5.5.6): 6 WRU; a reminder is a persisted event: 1. Counters, pointers, dispatch inputs and
 *   index copies are left out (a lower bound).
 * - A deadline's reminder or expiry runs code when it falls due (§5.5.6): one invocation each.
 * - Reads: an open SSE connection reads the log at least once a second (polling is the design;
 *   a read of nothing is 0.5 RRU).
 * - Deployed: the flush consumer's SQS event source mapping long-polls all month, however
 *   idle (ARCHITECTURE.md, "Dispatch to workers: SQS").
 * Everything else (logs, alarms, storage, search, the stream timer, sweepers) is left out.
 */
import { MONTH_DAYS, MONTH_SECONDS } from './model.js';
import type { CostLine, Workload } from './model.js';
import { FIXED, SIZES } from './operations.js';
import type { Operation } from './operations.js';
import type { Prices } from './prices.js';

/** Lambda's smallest memory size. */
export const SMALLEST_LAMBDA_MB = 128;
/** The contract's claim long-poll as the OpenClaw pump sends it (waitMs 10 s). */
export const PUMP_WAIT_MS = 10_000;

/** WRU each operation cannot go under, and why (see above); operations not listed: 0. */
export const FORCED_WRU: Record<string, number> = {
  'message.chunk': 2,
  'message.create.user': 4,
  'message.create.streaming': 4,
  // The message item with its final text, in the transaction with its event (above).
  'message.complete': 2 * Math.ceil(SIZES.finishedReply) + 2,
  'request.create': 4,
  'request.create.deadline': 4,
  // §5.5.6: every closing appends its decision log entry in the closing's own transaction: 3 × 2.
  'request.resolve': 6,
  'request.resolve.deadline': 6,
  'request.cancel': 6,
  'request.expire': 6,
  // A reminder is a persisted event (§5.5.6): one item at least.
  'request.remind': 1,
};

/**
 * Invocations no implementation avoids beyond HTTP requests: a deadline's reminder or expiry
 * falling due has to run code at that time (§5.5.6), once each (how the time is kept aside).
 */
export const FORCED_JOB_INVOCATIONS: Record<string, number> = {
  'request.remind': 1,
  'request.expire': 1,
};

export function floorLines(w: Workload, ops: readonly Operation[], p: Prices): CostLine[] {
  const lines: CostLine[] = [];
  const add = (service: string, what: string, quantity: number, unit: string, unitPrice: number) => {
    if (quantity > 0) lines.push({ service, what, quantity, unit, unitPrice, dollars: quantity * unitPrice });
  };
  const gbSeconds = (seconds: number) => seconds * (SMALLEST_LAMBDA_MB / 1024);
  const byId = new Map(ops.map((op) => [op.id, op]));

  let httpRequests = 0;
  let jobInvocations = 0;
  let wru = 0;
  for (const [id, perDay] of Object.entries(w.perDay)) {
    const op = byId.get(id);
    if (!op) throw new Error(`workload ${w.name}: no operation "${id}"`);
    const count = perDay * MONTH_DAYS;
    if (op.http) httpRequests += count;
    jobInvocations += count * (FORCED_JOB_INVOCATIONS[id] ?? 0);
    wru += count * (FORCED_WRU[id] ?? 0);
  }
  const pumpSeconds = MONTH_SECONDS * (PUMP_WAIT_MS / (PUMP_WAIT_MS + w.pumpPauseMs)) * w.claimPumps;
  const pumpRequests = pumpSeconds / (PUMP_WAIT_MS / 1000);
  const sseSeconds = w.sseHoursPerDay * 3600 * MONTH_DAYS;

  const requests = httpRequests + pumpRequests;
  add('CloudFront', 'HTTPS requests (one base URL)', requests, 'requests', p.cloudFront.httpsRequest);
  add('API Gateway', 'HTTP API requests (one Lambda per endpoint)', requests, 'requests', p.apiGateway.httpRequest);
  add('Lambda', 'invocations', requests, 'requests', p.lambda.request);
  add('Lambda', 'invocations: deadlines falling due', jobInvocations, 'requests', p.lambda.request);
  add('Lambda', `claim pumps held (${SMALLEST_LAMBDA_MB} MB)`, gbSeconds(pumpSeconds), 'GB-s', p.lambda.gbSecondArm);
  add('Lambda', `SSE connections held (${SMALLEST_LAMBDA_MB} MB)`, gbSeconds(sseSeconds), 'GB-s', p.lambda.gbSecondArm);
  add('DynamoDB', 'write units: chunk items + their events; entity + event transactions', wru, 'WRU', p.dynamodb.wru);
  add('DynamoDB', 'read units: SSE log reads, one a second', sseSeconds * 0.5, 'RRU', p.dynamodb.rru);
  if (w.deployed) {
    const polls = (FIXED.flushPollers * MONTH_SECONDS) / FIXED.pollWaitSeconds;
    add('SQS', 'standard requests: the flush consumer long-polls', polls, 'requests', p.sqs.standardRequest);
  }
  return lines.sort((a, b) => b.dollars - a.dollars);
}
