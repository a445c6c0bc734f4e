/**
 * The named workloads of issue 16, as operations per day and held connections.
 *
 * typical: 1 user, 5 agents; 2,000 messages/day: 1,000 user messages, each answered by a
 * streamed agent reply of 100 chunks (100,000 chunks/day); 200 interactive requests/day, each
 * resolved, and 200 more with a 1-hour deadline and two reminders (issue 36; below); dispatch in batched_sequential mode (the default): every user message and
 * resolution is one batch claimed and completed by the worker; one OpenClaw worker connected
 * all month (one claim pump, one SSE connection); one inbox tab open 8 h/day (its stream runs
 * on after the tab closes, since Lambda sees no disconnect, until 5 minutes pass without an event
 * or its 14-minute lifetime ends: ~2.5 min a day on average).
 * busy: 10× typical (operations, pumps and connections).
 * idle: deployed, nothing connected, no traffic: only what runs by itself; idle-without-alarms: the
 * same, deployed with `-c withoutAlarms=true`.
 */
import { SIZES } from './operations.js';
import type { Workload } from './model.js';

const userMessages = 1000;
const replies = 1000;
const requests = 200;
/**
 * Issue 36: 200 more requests a day carry a deadline (1 hour) and two reminders (30 and 5 minutes
 * before). Half are answered between the reminders, half expire (half cancelled, half resolved
 * with the default). A request's timers wait as one chain of delayed records in 900 s hops
 * (functions/platform/request-timer.ts): a hop at 15 min, the first reminder at 30, a hop at 45,
 * the second reminder at 55, the expiry at 60. An answered request's chain ends at its second
 * reminder's record, which finds it closed (stale): 2 hops and 3 firings per expiring request,
 * 2 hops, 1 reminder and 1 stale record per answered one.
 */
const deadlineRequests = 200;
const answeredInTime = deadlineRequests / 2;
const expired = deadlineRequests - answeredInTime;
const batches = userMessages + requests + deadlineRequests - expired / 2;
/**
 * Share of replies still streaming when their check comes (server.streamTimeoutSeconds, 60 s,
 * after the start): an assumption (a 100-chunk reply streams for seconds); each gets one
 * stream-timeout execution.
 */
const LONG_STREAM_SHARE = 0.01;
/**
 * Persisted events reaching the stream consumers: message.created ×2000, streaming.complete ×1000,
 * request ×400, and the deadline requests' created, closing and two reminders.
 */
const persistedEvents = userMessages + 2 * replies + 2 * requests + 4 * deadlineRequests;

const typicalPerDay: Record<string, number> = {
  'message.create.user': userMessages,
  'message.create.streaming': replies,
  'message.chunk': replies * SIZES.chunksPerReply,
  'message.complete': replies,
  'stream.timeout': replies,
  'stream.timeout.loop': replies * LONG_STREAM_SHARE,
  'request.create': requests,
  'request.create.deadline': deadlineRequests,
  'request.resolve': requests,
  'request.resolve.deadline': answeredInTime,
  'request.timer.hop': deadlineRequests * 2,
  'request.remind': expired * 2 + answeredInTime,
  'request.timer.stale': answeredInTime,
  'request.expire': expired,
  'dispatch.flush': batches,
  'dispatch.claim': batches,
  'dispatch.complete': batches,
  'dispatch.flush.idle': batches,
  // finalized message text: user messages and completed replies
  'search.index': userMessages + replies,
  'webhooks.consume': persistedEvents,
};

const scaled = (perDay: Record<string, number>, k: number) =>
  Object.fromEntries(Object.entries(perDay).map(([id, n]) => [id, n * k]));

/**
 * Minutes a stream runs on after its tab lets go (Lambda sees no disconnect): until 5 minutes
 * pass without an event or the 14-minute lifetime ends; ~2.5 min on average (an assumption).
 */
export const STREAM_TAIL_MIN = 2.5;

/** The worker's SSE connection all day + the inbox tab's 8 h and its tail. */
const typicalSseHours = 24 + 8 + STREAM_TAIL_MIN / 60;

export const WORKLOADS: readonly Workload[] = [
  {
    name: 'idle',
    description: 'deployed, nothing connected, no traffic',
    perDay: {},
    claimPumps: 0,
    pumpPauseMs: 50,
    sseHoursPerDay: 0,
    deployed: true,
  },
  {
    name: 'idle-without-alarms',
    description: 'idle, deployed with -c withoutAlarms=true (no CloudWatch alarm)',
    perDay: {},
    claimPumps: 0,
    pumpPauseMs: 50,
    sseHoursPerDay: 0,
    deployed: true,
    withoutAlarms: true,
  },
  {
    name: 'typical',
    description:
      '1 user, 5 agents; 1,000 user messages + 1,000 streamed replies × 100 chunks a day; 200 requests/day + 200 with deadlines; ' +
      '1 worker (1 claim pump + 1 SSE) all month; 1 inbox tab 8 h/day',
    perDay: typicalPerDay,
    claimPumps: 1,
    pumpPauseMs: 50,
    sseHoursPerDay: typicalSseHours,
    sseEventBurstsPerDay: persistedEvents,
    deployed: true,
  },
  {
    name: 'busy',
    description: '10× typical: operations, claim pumps and SSE connection-hours',
    perDay: scaled(typicalPerDay, 10),
    claimPumps: 10,
    pumpPauseMs: 50,
    sseHoursPerDay: typicalSseHours * 10,
    sseEventBurstsPerDay: persistedEvents * 10,
    deployed: true,
  },
];
