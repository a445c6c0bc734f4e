/**
 * What each operation does to AWS, in AWS's billing terms: the items it writes (size, GSI
 * copies, transactional or not), the items it reads (size, consistency), queue/bucket/state
 * machine requests, and the Lambda it runs on. One row per operation, read off the code
 * (functions/core/*.ts, functions/store/*-repo.ts, lib/constructs/*.ts); sizes are
 * approximate item sizes in KB for the typical workload's messages (see SIZES).
 *
 * Why not just DynamoDB Local's consumed capacity: it reports a transaction as 2 WCU per KB
 * of its largest item only, and it counts no GSI copy. The bench's measured figures (calls,
 * mean latency, Local's RCU/WCU) are printed beside these rows by model.ts, as a cross-check.
 *
 * GSI copies (lib/table-schema.ts): the chat item is in gsi1 and gsi2 (projection ALL) and, while
 * it needs attention, in gsi3 (INCLUDE: a small copy); the dispatch state is in gsi3 while it
 * has pending work. An update that changes an index's key attributes costs two index writes
 * (the old entry deleted, the new one put); one that changes only projected attributes, one.
 * A transaction doubles the table write of each of its items (prepare + commit); its index
 * copies are propagated once, as ordinary writes (see TRANSACTION_DOUBLES_INDEX_WRITES in
 * model.ts).
 */

/** One kind of item written by an operation. */
export interface ItemWrite {
  item: string;
  /** Approximate item size in KB (1 WRU per started KB, at least 1). */
  kb: number;
  /** Index writes per item write (2 for an index whose key changes, 1 for a projected-attribute change). */
  indexWrites?: number;
  /** Size of each index copy in KB when smaller than the item (INCLUDE projections). */
  indexKb?: number;
  /** Written inside a TransactWriteItems. */
  tx?: boolean;
  /** How many such items (default 1). */
  n?: number;
}

/** One kind of read made by an operation (a GetItem, or a Query returning `kb` in all). */
export interface ItemRead {
  item: string;
  kb: number;
  /** Strongly consistent (1 RRU per started 4 KB) or eventually (0.5 RRU per started 4 KB). */
  consistent: boolean;
  /** How many such reads (default 1; may be fractional: an average). */
  n?: number;
}

export type Group =
  | 'messages'
  | 'chunks'
  | 'stream timeouts'
  | 'requests'
  | 'deadlines'
  | 'dispatch'
  | 'claim pump'
  | 'SSE connections'
  | 'stream consumers'
  | 'sweepers';

export interface Operation {
  id: string;
  /** The operation whose function it runs on, when it is a variant of another (its own id otherwise). */
  functionOf?: string;
  what: string;
  group: Group;
  /** Bench labels that measure it (.bench/results.json `endpoints[].label`); their samples are pooled. */
  bench?: RegExp;
  /**
   * An HTTP request through CloudFront and API Gateway, and who sends it (its access log line carries
   * the sender's user agent: ACCESS_LOG_BYTES); false: a job invoked by AWS.
   */
  http: false | Sender;
  memoryMb: number;
  /** Billed Lambda duration when the bench has no figure (ms). */
  durationMs: number;
  /** DynamoDB calls the code makes (cross-checked against the bench's measured calls). */
  calls: number;
  writes: ItemWrite[];
  reads: ItemRead[];
  sqsStandard?: number;
  sqsFifo?: number;
  s3Put?: number;
  s3Get?: number;
  sfnTransitions?: number;
  xrayTraces?: number;
  /** Response body in KB (CloudFront data out). */
  responseKb?: number;
  /** Request body in KB (CloudFront data to origin). */
  requestKb?: number;
  /** CloudWatch Logs bytes per invocation (platform START/END/REPORT ~300 B + the request's info line). */
  logBytes: number;
  /** Storage added per use: KB kept for `days` (TTL) or the whole month (undefined). */
  stores?: { kb: number; days?: number };
}

/** Sizes of the typical workload's items (KB). */
export const SIZES = {
  /** A streamed reply: 100 chunks of ~40 B of text. */
  chunksPerReply: 100,
  chunkTextKb: 0.04,
  /** A chat item: title, tags, agents, preview, counters, index keys. */
  chat: 1,
  /** A message item without much text (a user message, a streaming one before its end). */
  message: 1,
  /** A streamed reply's message item once its text (100 × 40 B) is written into it. */
  finishedReply: 5,
  pointer: 0.1,
  chunk: 0.12,
  ephemeralEvent: 0.3,
  event: 0.6,
  /** The streaming.complete event carries the final text. */
  completeEvent: 4.6,
  counter: 0.1,
  dispatchInput: 0.5,
  dispatchState: 0.4,
  /** gsi3's INCLUDE copy of a chat or a dispatch state: keys + a few counters. */
  gsi3Copy: 0.2,
  batchHeader: 0.5,
  batchPart: 1,
  request: 1,
  /** A decision log entry: the request's id, title and payload, the two hashes; its head item. */
  decision: 0.6,
} as const;

const S = SIZES;
/** Every write route first counts the client in its rate-limit window (functions/middleware/rate-limit.ts). */
const rateLimit: ItemWrite = { item: 'rate-limit window RL#<client> (UpdateItem)', kb: S.counter };
/** withEvents reserves event numbers with one UpdateItem (store/events-repo.ts reserveSequence). */
const sequence: ItemWrite = { item: 'event sequence SEQ (UpdateItem)', kb: S.counter };
const chatGet: ItemRead = { item: 'chat (GetItem, existingChat)', kb: S.chat, consistent: true };
/**
 * Message and request creation and stream completion read the chat only when their container has not seen it yet
 * (core/chat-lookup.ts chatFacts; the transaction checks model and pin): a cold container or a new
 * chat, taken here as 1 create in 10.
 */
const CHAT_READ_SHARE = 0.1;
const chatGetCold: ItemRead = {
  ...chatGet,
  item: 'chat (GetItem, chatFacts: cold container only)',
  n: CHAT_READ_SHARE,
};
/**
 * Chats.recordActivity with last_message_at (core/chat-activity.ts commitTouchingChat): gsi1sk
 * moves, and gsi2 sorts on gsi1sk too, so both ALL copies are deleted and put again (4 writes).
 */
const chatActivity: ItemWrite = {
  item: 'chat activity (in gsi1 + gsi2, keys move)',
  kb: S.chat,
  tx: true,
  indexWrites: 4,
};
/**
 * Log bytes per invocation: a request line is ~700 B (a job's ~400 B), but functions log at WARN
 * with 1% of invocations sampled in full (lib/deployment-inputs.ts loggingEnvironment), and Lambda's own
 * START/END/REPORT lines are kept to WARN too (api-function.ts): 1% of the line on average.
 */
const LOG_SAMPLE_RATE = 0.01;
/** Who sends an HTTP request: an agent or its worker (a Node client), or the person's browser. */
export type Sender = 'agent' | 'browser';
/**
 * Bytes of one API Gateway access log line (every HTTP API request writes one, unsampled): the
 * fields of lib/constructs/api.ts ACCESS_LOG_FIELDS for a chunk append, by sender: a Node client
 * over IPv4 (user agent `node`, as the agents' plugin sends) and a browser over IPv6 (a full
 * browser user agent). test/infra/stack.test.ts checks that both lines fit.
 */
export const ACCESS_LOG_BYTES: Record<Sender, number> = { agent: 280, browser: 380 };
const API_LOG = 700 * LOG_SAMPLE_RATE;
const JOB_LOG = 400 * LOG_SAMPLE_RATE;

/** A stream timeout's look at one stream (core/streaming.ts expireIfIdle): its pointer, then the message. */
const streamLookup: ItemRead[] = [
  { item: 'message pointer (GetItem)', kb: S.pointer, consistent: true },
  { item: 'message (GetItem)', kb: S.finishedReply, consistent: true },
];

/** A request found by id (core/requests.ts find): its pointer, then the request. */
const requestLookup: ItemRead[] = [
  { item: 'request pointer (GetItem)', kb: S.pointer, consistent: true },
  { item: 'request (GetItem)', kb: S.request, consistent: true },
];
/** The decision log's head, read before the closing's transaction (store/decisions-repo.ts). */
const decisionHeadGet: ItemRead = { item: 'decision log head (GetItem)', kb: S.counter, consistent: true };
/**
 * What every closing writes in its transaction (core/request-closing.ts): the request's end (its
 * gsi1 key moves to the closed list and its gsi2 sort key moves: 4 index writes), the chat's
 * pending count, the decision log's head and its entry (§5.5.6).
 */
const requestClosing: ItemWrite[] = [
  { item: 'request end (conditional; gsi1 + gsi2 keys move)', kb: S.request, tx: true, indexWrites: 4 },
  { item: 'chat pending count (gsi1 + gsi2 + gsi3)', kb: S.chat, tx: true, indexWrites: 3 },
  { item: 'decision log head (conditional)', kb: S.counter, tx: true },
  { item: 'decision log entry', kb: S.decision, tx: true },
];
/**
 * A request with a deadline carries a timer mark in the sparse gsi3 while pending (store/keys.ts
 * requestTimerDue, the sweep's safety net): one more index write where its item is written (a put
 * at the create, a delete at the closing; a reminder moves it: delete + put).
 */
const withTimerMark = (w: ItemWrite, copies = 1): ItemWrite => ({
  ...w,
  item: `${w.item} + gsi3 timer mark`,
  indexWrites: (w.indexWrites ?? 0) + copies,
});
const deadlineClosing: ItemWrite[] = [withTimerMark(requestClosing[0]!), ...requestClosing.slice(1)];
/** One delayed record of a request timer on the flush queue: sent, received and deleted by its event source. */
const TIMER_SQS = 3;

const BASE_OPERATIONS: readonly Operation[] = [
  {
    id: 'message.create.user',
    what: 'POST messages (user): message + dispatch input',
    group: 'messages',
    bench: /^POST \/api\/v1\/chats\/\{chatId\}\/messages \(user\)$/,
    http: 'browser',
    memoryMb: 1024,
    durationMs: 40,
    // warm: the event numbers, then the transaction (the chat read only when cold)
    calls: 2 + CHAT_READ_SHARE,
    writes: [
      rateLimit,
      sequence,
      { item: 'message', kb: S.message, tx: true },
      { item: 'message pointer', kb: S.pointer, tx: true },
      { item: 'dispatch input DIN#', kb: S.dispatchInput, tx: true },
      // first_pending_at / gsi3 DISPATCH#PENDING mark put (small INCLUDE copy)
      { item: 'dispatch state (gsi3 mark)', kb: S.dispatchState, tx: true, indexWrites: 1, indexKb: S.gsi3Copy },
      chatActivity,
      { item: 'event message.created', kb: S.event, tx: true },
    ],
    reads: [chatGetCold],
    // batched_sequential (the default mode): a delayed flush signal (core/dispatch/seal.ts inputAdded)
    sqsStandard: 1,
    responseKb: 1,
    requestKb: 0.5,
    logBytes: API_LOG,
    stores: { kb: S.message + S.pointer + S.event },
  },
  {
    id: 'message.create.streaming',
    what: 'POST messages (agent, streaming): message + open stream + timer',
    group: 'messages',
    bench: /^POST \/api\/v1\/chats\/\{chatId\}\/messages \(agent, streaming\)$/,
    http: 'agent',
    memoryMb: 1024,
    durationMs: 45,
    // warm: the event numbers, then the transaction (the chat read only when cold)
    calls: 2 + CHAT_READ_SHARE,
    writes: [
      rateLimit,
      sequence,
      { item: 'message', kb: S.message, tx: true },
      { item: 'message pointer', kb: S.pointer, tx: true },
      { item: 'open-stream marker', kb: S.pointer, tx: true },
      // countsUnread: unread_count moves in gsi3's INCLUDE copy too
      { ...chatActivity, item: 'chat activity (gsi1 + gsi2 keys move, gsi3 unread)', indexWrites: 5 },
      { item: 'event message.created', kb: S.event, tx: true },
    ],
    reads: [chatGetCold],
    responseKb: 1,
    requestKb: 0.2,
    logBytes: API_LOG,
    stores: { kb: S.pointer + S.event },
  },
  {
    id: 'message.chunk',
    what: 'POST chunks: number, then chunk put + ephemeral event put side by side',
    group: 'chunks',
    bench: /^POST \/api\/v1\/messages\/\{messageId\}\/chunks /,
    http: 'agent',
    // lib/routes.ts CHUNK_MEMORY_MB
    memoryMb: 512,
    durationMs: 30,
    calls: 3,
    // Two sequential round trips on a warm instance: the numbering, then the two writes in
    // parallel (core/streaming.ts appendChunk); no transaction. The chat is not written: its
    // updated_at is read through its open streams (core/chat-reads.ts withStreamActivity).
    writes: [
      // The rate-limit counter is leased in blocks of max/10 (10 by default) per instance and
      // window (middleware/rate-limit.ts): an agent streaming >= 4 chunks/s through a warm
      // instance writes it once per 1 s window, <= 1/4 of its chunks.
      { ...rateLimit, item: 'rate-limit lease RL#<client> (UpdateItem, once per block/window)', n: 0.25 },
      { item: 'message chunk_count (UpdateItem reserveChunk)', kb: S.message },
      { item: 'chunk CHUNK#<seq> (conditional PutItem)', kb: S.chunk },
      { item: 'ephemeral event (PutItem)', kb: S.ephemeralEvent },
    ],
    // The message pointer is cached per function instance (core/locations.ts).
    reads: [],
    responseKb: 1,
    requestKb: 0.1,
    logBytes: API_LOG,
    stores: { kb: S.chunk, days: 7 },
  },
  {
    id: 'message.complete',
    what: 'POST complete: assemble chunks, final text, chat, event',
    group: 'messages',
    bench: /^POST \/api\/v1\/messages\/\{messageId\}\/complete /,
    http: 'agent',
    memoryMb: 1024,
    durationMs: 50,
    calls: 7,
    writes: [
      rateLimit,
      sequence,
      { item: 'message final text (conditional update)', kb: S.finishedReply, tx: true },
      { item: 'open-stream marker (delete)', kb: S.pointer, tx: true },
      chatActivity,
      { item: 'event message.streaming.complete (final text)', kb: S.completeEvent, tx: true },
    ],
    reads: [
      // another function than chunks': its location cache is cold for this message
      { item: 'message pointer (GetItem)', kb: S.pointer, consistent: true },
      { item: 'message (GetItem)', kb: S.message, consistent: true },
      // the complete function's text cache holds none of the chunk function's chunks
      { item: 'chunks (Query)', kb: S.chunksPerReply * S.chunk, consistent: true },
      // the chat's pin (core/chat-lookup.ts chatFacts, beside the event number)
      chatGetCold,
    ],
    responseKb: 5,
    logBytes: API_LOG,
    stores: { kb: S.finishedReply + S.completeEvent - S.message },
  },
  {
    id: 'stream.timeout',
    what: 'stream check: one delayed message per new stream on the flush queue, one look at a stream over by then',
    group: 'stream timeouts',
    http: false,
    memoryMb: 1024,
    durationMs: 30,
    calls: 2,
    writes: [],
    // expireIfIdle: locate + getMessage; the stream is already complete: done, no execution
    reads: streamLookup,
    // functions/platform/stream-timer.ts: SendMessage on the flush queue (the create route), its
    // event source's ReceiveMessage and DeleteMessage (one each per message at this rate: an upper
    // bound); the flush consumer runs the check (functions/jobs/flush.ts)
    sqsStandard: 3,
    logBytes: JOB_LOG,
  },
  {
    id: 'stream.timeout.loop',
    what: 'a stream still active at its check: one stream-timeout execution, one round',
    group: 'stream timeouts',
    http: false,
    memoryMb: 1024,
    durationMs: 30,
    calls: 2,
    writes: [],
    reads: streamLookup,
    // lib/constructs/stream-timeouts.ts: Wait → ExpireIfIdle → IsStreamOver → StreamOver
    // (+3 per further round: Wait → ExpireIfIdle → IsStreamOver)
    sfnTransitions: 4,
    xrayTraces: 1,
    logBytes: JOB_LOG,
  },
  {
    id: 'request.create',
    what: 'POST requests: request + pointer + pending count + event',
    group: 'requests',
    bench: /^POST \/api\/v1\/chats\/\{chatId\}\/requests$/,
    http: 'agent',
    memoryMb: 1024,
    durationMs: 40,
    // warm: the event numbers, then the transaction (the chat read only when cold)
    calls: 2 + CHAT_READ_SHARE,
    writes: [
      rateLimit,
      sequence,
      // In the approvals lists (§5.5.6): gsi1 (its status) and gsi2 (all), projection ALL.
      { item: 'request (+ gsi1 + gsi2)', kb: S.request, tx: true, indexWrites: 2 },
      { item: 'request pointer', kb: S.pointer, tx: true },
      // Chats.adjustPending: pending_requests_count, updated_at: gsi1, gsi2, gsi3 copies updated
      { item: 'chat pending count (gsi1 + gsi2 + gsi3)', kb: S.chat, tx: true, indexWrites: 3 },
      { item: 'event request.created', kb: S.event, tx: true },
    ],
    reads: [chatGetCold],
    responseKb: 1,
    requestKb: 0.5,
    logBytes: API_LOG,
    stores: { kb: S.request + S.pointer + S.event },
  },
  {
    id: 'request.resolve',
    what: 'POST resolve: request, pending count, event, dispatch input, decision entry',
    group: 'requests',
    bench: /^POST \/api\/v1\/requests\/\{requestId\}\/resolve$/,
    http: 'browser',
    memoryMb: 1024,
    durationMs: 45,
    // rate limit, pointer, request, event numbers, decision head, the transaction (+ the flush signal's SQS)
    calls: 6,
    writes: [
      rateLimit,
      sequence,
      ...requestClosing,
      { item: 'event request.resolved', kb: S.event, tx: true },
      { item: 'dispatch input DIN#', kb: S.dispatchInput, tx: true },
      { item: 'dispatch state (gsi3 mark)', kb: S.dispatchState, tx: true, indexWrites: 1, indexKb: S.gsi3Copy },
    ],
    reads: [...requestLookup, decisionHeadGet],
    sqsStandard: 1,
    responseKb: 1,
    requestKb: 0.3,
    logBytes: API_LOG,
    stores: { kb: S.event },
  },
  {
    id: 'request.cancel',
    what: 'POST cancel: request, pending count, event, decision entry',
    group: 'requests',
    bench: /^POST \/api\/v1\/requests\/\{requestId\}\/cancel$/,
    http: 'agent',
    memoryMb: 1024,
    durationMs: 40,
    calls: 6,
    writes: [rateLimit, sequence, ...requestClosing, { item: 'event request.cancelled', kb: S.event, tx: true }],
    reads: [...requestLookup, decisionHeadGet],
    responseKb: 1,
    logBytes: API_LOG,
    stores: { kb: S.event + S.decision },
  },
  {
    id: 'request.timer.hop',
    what: 'a deadline timer not yet due (a wait over 900 s): the flush consumer sends it on',
    group: 'deadlines',
    http: false,
    memoryMb: 1024,
    durationMs: 15,
    calls: 0,
    writes: [],
    reads: [],
    sqsStandard: TIMER_SQS,
    logBytes: JOB_LOG,
  },
  {
    id: 'request.timer.stale',
    what: 'a deadline timer of a request answered (or re-timed) meanwhile: one look, nothing written',
    group: 'deadlines',
    http: false,
    memoryMb: 1024,
    durationMs: 15,
    calls: 2,
    writes: [],
    reads: requestLookup,
    sqsStandard: TIMER_SQS,
    logBytes: JOB_LOG,
  },
  {
    id: 'request.remind',
    what: 'a reminder falls due: request.reminder event + the reminder mark, one transaction (then its push)',
    group: 'deadlines',
    http: false,
    memoryMb: 1024,
    durationMs: 30,
    calls: 4,
    writes: [
      sequence,
      // reminders_sent: a projected attribute of gsi1 and gsi2 changes (1 write each); the timer
      // mark moves on to the next timer (gsi3 key: delete + put)
      withTimerMark({ item: 'request reminder mark (conditional)', kb: S.request, tx: true, indexWrites: 2 }, 2),
      { item: 'event request.reminder', kb: S.event, tx: true },
    ],
    reads: requestLookup,
    sqsStandard: TIMER_SQS,
    logBytes: JOB_LOG,
    stores: { kb: S.event, days: 30 },
  },
  {
    id: 'request.expire',
    what: 'a deadline falls due: the request closed as a client would (half cancel, half resolve with the default)',
    group: 'deadlines',
    http: false,
    memoryMb: 1024,
    durationMs: 45,
    calls: 5,
    writes: [
      sequence,
      ...deadlineClosing,
      { item: 'event request.cancelled / request.resolved', kb: S.event, tx: true },
      // the resolving half: a dispatch input and the chat's dispatch state
      { item: 'dispatch input DIN# (resolve half)', kb: S.dispatchInput, tx: true, n: 0.5 },
      {
        item: 'dispatch state (gsi3 mark; resolve half)',
        kb: S.dispatchState,
        tx: true,
        indexWrites: 1,
        indexKb: S.gsi3Copy,
        n: 0.5,
      },
    ],
    reads: [...requestLookup, decisionHeadGet],
    // the timer's record, and for the resolving half the flush signal
    sqsStandard: TIMER_SQS + 0.5,
    logBytes: JOB_LOG,
    stores: { kb: S.event + S.decision },
  },
  {
    id: 'dispatch.flush',
    what: 'flush consumer: seal the input into a batch, hand it to the FIFO queue',
    group: 'dispatch',
    http: false,
    memoryMb: 1024,
    durationMs: 80,
    calls: 10,
    writes: [
      // Store.sealWrites: batch header, payload part, batch ref, dispatch state (gsi3 sk moves)
      { item: 'batch header', kb: S.batchHeader, tx: true },
      { item: 'batch payload part', kb: S.batchPart, tx: true },
      { item: 'batch ref BREF#', kb: S.pointer, tx: true },
      { item: 'dispatch state (gsi3 key moves)', kb: S.dispatchState, tx: true, indexWrites: 2, indexKb: S.gsi3Copy },
      // markSent: dispatch state + batch ref delete, one transaction
      { item: 'dispatch state sent + batch ref delete', kb: S.dispatchState, tx: true, n: 2 },
      { item: 'taken input (DeleteItem)', kb: S.dispatchInput },
      // clearPendingMark: REMOVE gsi3pk → the gsi3 copy is deleted
      { item: 'dispatch state pending mark', kb: S.dispatchState, indexWrites: 1, indexKb: S.gsi3Copy },
    ],
    reads: [
      { item: 'dispatch state (GetItem)', kb: S.dispatchState, consistent: true, n: 3 },
      { item: 'unsealed inputs (Query)', kb: S.dispatchInput, consistent: true },
      { item: 'batch ref (GetItem)', kb: S.pointer, consistent: true },
    ],
    // the batch to the FIFO queue; the event source mapping deletes the signal
    sqsFifo: 1,
    sqsStandard: 1,
    logBytes: JOB_LOG,
    stores: { kb: S.batchHeader + S.batchPart, days: 4 },
  },
  {
    id: 'dispatch.claim',
    what: 'POST claim-many that receives a batch: lease, read payload',
    group: 'dispatch',
    // the backlog scenario's claims find a batch at once (others include waiting for one)
    bench: /^POST \/api\/v1\/dispatch\/claim \(backlog/,
    http: 'agent',
    // lib/routes.ts WAITING_MEMORY_MB
    memoryMb: 128,
    durationMs: 40,
    calls: 6,
    writes: [
      rateLimit,
      { item: 'batch header lease (conditional update)', kb: S.batchHeader },
      { item: 'dispatch state leased batch (noteLeased)', kb: S.dispatchState },
    ],
    reads: [
      { item: 'batch header (GetItem)', kb: S.batchHeader, consistent: true },
      // Beside it, the chat's previous batch, which must be settled (all but a chat's first batch)
      { item: 'previous batch header (GetItem)', kb: S.batchHeader, consistent: true },
      { item: 'batch payload parts (Query)', kb: S.batchPart, consistent: true },
    ],
    sqsFifo: 1,
    responseKb: 2,
    logBytes: API_LOG,
  },
  {
    id: 'dispatch.complete',
    what: 'POST dispatch complete: batch ends, message deleted, flush signal',
    group: 'dispatch',
    bench: /^POST \/api\/v1\/dispatch\/\{batchId\}\/complete /,
    http: 'agent',
    memoryMb: 1024,
    durationMs: 30,
    calls: 2,
    writes: [rateLimit, { item: 'batch header completed (conditional update)', kb: S.batchHeader }],
    reads: [],
    sqsFifo: 1,
    sqsStandard: 1,
    logBytes: API_LOG,
  },
  {
    id: 'dispatch.flush.idle',
    what: "flush consumer after a batch's end: nothing pending",
    group: 'dispatch',
    http: false,
    memoryMb: 1024,
    durationMs: 15,
    calls: 1,
    writes: [],
    reads: [{ item: 'dispatch state (GetItem)', kb: S.dispatchState, consistent: true }],
    sqsStandard: 1,
    logBytes: JOB_LOG,
  },
  {
    id: 'claim.empty',
    what: 'POST claim-many, waitMs 10 s, nothing to claim (a pump cycle)',
    group: 'claim pump',
    bench: /^POST \/api\/v1\/dispatch\/claim \(.*204 after waiting\)$/,
    http: 'agent',
    // lib/routes.ts WAITING_MEMORY_MB: an idle pump holds a 128 MB function
    memoryMb: 128,
    // the wait itself; the measured overhead above the bench's own wait is added (model.ts)
    durationMs: 10_000,
    calls: 1,
    writes: [rateLimit],
    reads: [],
    // core/dispatch/claim.ts longPollSeconds: the 9.99 s left is one 10 s long-poll (before: a 9 s one,
    // then ~5 receives without waiting over the last second)
    sqsFifo: 1,
    logBytes: API_LOG,
  },
  {
    id: 'search.index',
    what: 'search index writer (table stream): one segment per message event batch',
    group: 'stream consumers',
    http: false,
    memoryMb: 1024,
    durationMs: 150,
    calls: 2,
    writes: [{ item: 'search manifest (conditional put)', kb: 1 }],
    reads: [{ item: 'search manifest (GetItem)', kb: 1, consistent: true }],
    // a segment put, and every 8 segments a merge: 8 gets + 1 put
    s3Put: 1 + 1 / 8,
    s3Get: 1,
    logBytes: JOB_LOG,
  },
  {
    id: 'webhooks.consume',
    what: 'webhooks consumer (table stream): a persisted event, no hook configured',
    group: 'stream consumers',
    http: false,
    memoryMb: 256,
    durationMs: 10,
    calls: 0,
    writes: [],
    reads: [],
    logBytes: 300,
  },
  {
    id: 'sweep.dispatch',
    what: 'dispatch sweeper (every minute): stale pending work, repairs, overdue deadlines (§5.5.6 safety net)',
    group: 'sweepers',
    http: false,
    memoryMb: 1024,
    durationMs: 30,
    calls: 3,
    writes: [],
    // gsi3 queries are eventually consistent (indexes have no other kind)
    reads: [
      { item: 'gsi3 DISPATCH#PENDING / DISPATCH#REPAIR (Query)', kb: 0.1, consistent: false, n: 2 },
      { item: 'gsi3 REQUESTS#TIMERS, timers overdue (Query)', kb: 0.1, consistent: false },
    ],
    logBytes: 300,
  },
  {
    id: 'sweep.tags',
    what: 'tag catalog sweeper (every minute): stranded catalog parts',
    group: 'sweepers',
    http: false,
    memoryMb: 1024,
    durationMs: 15,
    calls: 1,
    writes: [],
    reads: [{ item: 'gsi3 TAGS#PENDING (Query)', kb: 0.1, consistent: false }],
    logBytes: 300,
  },
];

/** An operation of a request with a deadline: `base`'s, with the timer mark's index write. */
function withDeadline(baseId: string, id: string, what: string): Operation {
  const base = BASE_OPERATIONS.find((op) => op.id === baseId)!;
  const first = base.writes.findIndex((w) => w.item.startsWith('request'));
  const writes = base.writes.map((w, i) => (i === first ? withTimerMark(w) : w));
  return { ...base, id, functionOf: baseId, what, writes };
}

export const OPERATIONS: readonly Operation[] = [
  ...BASE_OPERATIONS,
  withDeadline(
    'request.create',
    'request.create.deadline',
    'POST requests with a deadline: as POST requests + its timer mark',
  ),
  withDeadline(
    'request.resolve',
    'request.resolve.deadline',
    'POST resolve before the deadline: as POST resolve + the timer mark goes',
  ),
];

/**
 * A held SSE connection (lib/constructs/event-stream.ts: 128 MB, 15-minute timeout;
 * core/event-stream.ts: 14-minute lifetime, released after 5 minutes without an event, then the
 * client reconnects; polls every 100 ms while events flow, backing off to 1 s when idle;
 * keepalive every 15 s).
 */
export const SSE = {
  memoryMb: 128,
  lifetimeMin: 14,
  /**
   * A quiet connection is released after this long (core/event-stream.ts DEFAULT_TIMING), so a
   * connection-minute costs at most 1/idleReleaseMin reconnects.
   */
  idleReleaseMin: 5,
  /**
   * Reads per reconnect, AWS terms (BENCH_ONLY=sse: ~24 calls beyond idle polling without a warm
   * window = 13 RRU): the start's two strongly consistent GetItems (sequence, Last-Event-ID's
   * event) and the fast polls of a new connection's back-off (0.5 RRU each); plus the warm
   * window every new connection starts with (below): 26.
   */
  reconnectRru: 26,
  /**
   * Reads of one warm window (6 s at 200 ms after a burst of events instead of backing off to
   * 1 s; BENCH_ONLY=sse: the defaults' idle connection against the plain 1 s one, 25 calls).
   */
  warmRruPerBurst: 12.5,
  warmSeconds: 6,
  /**
   * Idle polling per minute when the bench has no `sse.idle` figure: 60 polls × (1 eventually
   * consistent log Query + ~1.33 ephemeral bucket Queries) + a strongly consistent sequence
   * read every 5 s: 152, as BENCH_ONLY=events measured it with one-minute ephemeral buckets
   * (store/keys.ts EPHEMERAL_BUCKET_MS; 168 with the 10 s buckets before).
   */
  idleCallsPerMinute: 60 * 2.33 + 12,
  strongCallsPerMinute: 12,
  /** Keepalive comments: 15 B every 15 s (KB per minute). */
  keepaliveKbPerMinute: 0.06,
  logBytesPerConnection: 700 * LOG_SAMPLE_RATE,
} as const;

/** Fixed resources (per month, whatever the traffic). */
export const FIXED = {
  /**
   * Alarm metrics (CloudWatch bills each metric an alarm reads; test/infra/stack.test.ts counts
   * them in the template): the dead-letter alarms of the dispatch batches, the flush queue and
   * the table stream's two consumers (one queue: lib/constructs/stream-consumer.ts) (3), and
   * lib/constructs/alarms.ts: API 5xx, Lambda errors, Lambda throttles, the event stream's
   * concurrency (1 each), the table's read + write throttle events (2), the stream-timeout
   * executions failed + timed out (2).
   */
  alarms: 11,
  /**
   * The stored secrets (instance secret, origin-verify value; lib/constructs/stored-secrets.ts) are
   * table items: one strongly consistent read of an item under 4 KB is 1 RRU.
   */
  secretItemRru: 1,
  /** A function reads its stored secrets again after 300 s (store/secrets-repo.ts STORED_SECRET_TTL_MS). */
  secretMaxAgeSeconds: 300,
  /**
   * The stack's one SQS event source mapping, the flush queue's (lib/constructs/dispatch-queues.ts;
   * the queue carries the flush signals and the delayed stream checks), long-polls all month:
   * Lambda starts with 5 concurrent pollers, each making one ReceiveMessage per 20 s of wait.
   */
  flushPollers: 5,
  pollWaitSeconds: 20,
} as const;
