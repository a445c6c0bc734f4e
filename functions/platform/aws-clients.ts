/**
 * Time budgets of the AWS SDK clients (issue 17 finding 7). Without them a call to a
 * dependency that stops answering waits forever (the SDK's default has no request timeout), and
 * the function runs into its own timeout, which API Gateway answers with its bare 500.
 *
 * Each call gets a connection timeout and a total request timeout per attempt, and a number of
 * attempts (the SDK's standard retry: jittered exponential back-off from 100 ms, on throttling,
 * 5xx, network errors and timeouts). Its worst case, `worstCaseMs`, stays inside the shortest
 * route timeout (lib/routes.ts, DEFAULT_FUNCTION_TIMEOUT_SECONDS; test/unit/aws-clients.test.ts
 * checks it), so a dependency that hangs fails the call in time, and the request answers the
 * contract's 500 INTERNAL_ERROR envelope (its only error for an unexpected failure: it has no 503)
 * from our own handler, logged with the request id, instead of hanging.
 *
 * The budgets are far above a healthy call (DynamoDB answers in milliseconds; DynamoDB Local
 * under a loaded test machine in up to a few seconds) and well under the timeouts. A retried
 * TransactWriteItems repeats its ClientRequestToken, so a transaction that committed before its
 * answer was lost is not applied twice.
 */
/**
 * Per attempt, the time to open the TCP connection: long enough for one retransmitted SYN.
 * Linux resends a SYN that got no answer after 1 s (its initial retransmission timeout), so a
 * 1 s connection timeout failed every attempt whose first SYN was dropped, exactly as the resend
 * went out. Seen on loopback: a burst of new sockets to DynamoDB Local (200 concurrent PATCHes of
 * one chat, or 50 beside the full suite) overflows its accept queue, and with 1 s the reads of
 * 31 of 200 requests failed all three attempts (429); with 2 s none did. The request timeout
 * includes the connection, so the worst case of a call does not change.
 */
export const CONNECTION_TIMEOUT_MS = 2000;

export interface CallBudget {
  /** Per attempt: opening the TCP connection (CONNECTION_TIMEOUT_MS). */
  connectionTimeoutMs: number;
  /** Per attempt: the whole request and response (connection included). */
  requestTimeoutMs: number;
  /** Attempts in all, the first included. */
  maxAttempts: number;
}

/**
 * DynamoDB: three attempts, so throttling (ProvisionedThroughputExceeded, ThrottlingException)
 * still gets two retries. The timeout is well above a slow call (DynamoDB Local on a loaded
 * machine takes up to ~3 s) because a timed-out call may still have been applied, and its retry
 * then applies it again: harmless for a transaction (its ClientRequestToken) or a conditional
 * write (it fails), but a sequence reservation leaves a hole that SSE readers skip after their grace.
 */
export const DYNAMODB_BUDGET: CallBudget = {
  connectionTimeoutMs: CONNECTION_TIMEOUT_MS,
  requestTimeoutMs: 4000,
  maxAttempts: 3,
};
/** S3: bodies up to the API's 10 MB payload (larger files go straight to S3 with presigned URLs). */
export const S3_BUDGET: CallBudget = {
  connectionTimeoutMs: CONNECTION_TIMEOUT_MS,
  requestTimeoutMs: 6000,
  maxAttempts: 2,
};
/** SQS sends, deletes and visibility changes; a long-poll receive adds its wait (longPollTimeoutMs). */
export const SQS_BUDGET: CallBudget = {
  connectionTimeoutMs: CONNECTION_TIMEOUT_MS,
  requestTimeoutMs: 4000,
  maxAttempts: 3,
};
/** Step Functions (starting a stream-timeout execution). */
export const CONTROL_PLANE_BUDGET: CallBudget = {
  connectionTimeoutMs: CONNECTION_TIMEOUT_MS,
  requestTimeoutMs: 4000,
  maxAttempts: 3,
};

/** The standard retry strategy's largest back-off before attempt n + 1 (n >= 1): 100 ms × 2^(n-1), jittered below. */
const maxBackoffMs = (attempt: number) => Math.min(20_000, 100 * 2 ** (attempt - 1));

/** The longest one call can take before it fails: every attempt timing out, plus the back-offs between them. */
export function worstCaseMs(budget: CallBudget, requestTimeoutMs = budget.requestTimeoutMs): number {
  let total = budget.maxAttempts * requestTimeoutMs;
  for (let n = 1; n < budget.maxAttempts; n++) total += maxBackoffMs(n);
  return total;
}

/**
 * A receive that long-polls `waitSeconds` must be allowed that long plus the usual budget, and
 * no more in all (retries included); it is passed per call (`requestTimeout`, `abortSignal`).
 */
export const longPollTimeoutMs = (waitSeconds: number) => waitSeconds * 1000 + SQS_BUDGET.requestTimeoutMs;

/**
 * The client options for a budget: `maxAttempts` and a request handler with the timeouts
 * (`throwOnRequestTimeout`: a breach is an error the SDK retries, not a warning). `agent` adds
 * socket options (keep-alive, pool size).
 */
export function clientBudget(budget: CallBudget, agent?: { keepAlive?: boolean; maxSockets?: number }) {
  return {
    maxAttempts: budget.maxAttempts,
    requestHandler: {
      connectionTimeout: budget.connectionTimeoutMs,
      requestTimeout: budget.requestTimeoutMs,
      throwOnRequestTimeout: true,
      ...(agent ? { httpAgent: agent } : {}),
    },
  };
}
