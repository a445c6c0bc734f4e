/**
 * One local process serves many requests at once, as Lambda's multi-concurrency mode does
 * (one execution environment, concurrent invocations). Like that runtime, the local runtime
 * gives each request and each job run its own invocation context, so the libraries that scope
 * state per invocation keep it apart: Powertools' Logger keeps the keys a request appends
 * (request id, route, path) on that request's lines only, and functions/platform/invocation.ts
 * keeps a request's record there (its DynamoDB usage, the deadline its calls end by), which a job
 * run started from the request never sees.
 *
 * Powertools finds the context through `globalThis.awslambda.InvokeStore` (the store Lambda's
 * Node.js runtime provides) when AWS_LAMBDA_MAX_CONCURRENCY is set. The AWS SDK creates a
 * single-context store on its first call when that variable is not set yet, so the local
 * runtime installs its own (AsyncLocalStorage, the same interface) whatever came first.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { SQSRecord } from 'aws-lambda';

type InvocationContext = Record<PropertyKey, unknown>;

/** The runtime's key for the request id of an invocation. */
const REQUEST_ID = Symbol.for('_AWS_LAMBDA_REQUEST_ID');
const X_RAY_TRACE_ID = Symbol.for('_AWS_LAMBDA_X_RAY_TRACE_ID');
const TENANT_ID = Symbol.for('_AWS_LAMBDA_TENANT_ID');
/** Aborted when the invocation ran past its function timeout (see `invocationAbandoned`). */
const ABANDONED = Symbol('chat-relay.invocation-abandoned');

class LocalInvokeStore {
  readonly #als = new AsyncLocalStorage<InvocationContext>();
  getContext(): InvocationContext | undefined {
    return this.#als.getStore();
  }
  hasContext(): boolean {
    return this.#als.getStore() !== undefined;
  }
  /** What code sets outside any invocation (module initialization, as in Lambda's init phase). */
  readonly #outside: InvocationContext = {};
  get(key: PropertyKey): unknown {
    const context = this.#als.getStore();
    return context && key in context ? context[key] : this.#outside[key];
  }
  set(key: PropertyKey, value: unknown): void {
    (this.#als.getStore() ?? this.#outside)[key] = value;
  }
  run<T>(context: InvocationContext, fn: () => T): T {
    return this.#als.run(context, fn);
  }
  getRequestId(): string {
    return String(this.get(REQUEST_ID) ?? '-');
  }
  getXRayTraceId(): unknown {
    return this.get(X_RAY_TRACE_ID);
  }
  getTenantId(): unknown {
    return this.get(TENANT_ID);
  }
}

let store: LocalInvokeStore | undefined;

/** Turns per-invocation contexts on (before any handler runs). */
export function startInvocations(): void {
  // What Lambda sets in multi-concurrency mode; Powertools reads it to scope its state.
  process.env.AWS_LAMBDA_MAX_CONCURRENCY ??= '64';
  const g = globalThis as unknown as { awslambda?: Record<string, unknown> };
  store ??= new LocalInvokeStore();
  (g.awslambda ??= {}).InvokeStore = store;
}

/**
 * Runs `fn` as one invocation with its own context (a fresh request id for job runs).
 * `abandoned` aborts when the invocation is given up (it ran past its function timeout).
 */
export function asInvocation<T>(fn: () => T, requestId: string = randomUUID(), abandoned?: AbortSignal): T {
  // A context of its own, nothing of the flow it was started from: a job run from a request's timer
  // (a stream check) is not that request, so it finds neither its invocation record (usage, the
  // calls' deadline: functions/platform/invocation.ts) nor its request id. Its deadline and
  // Idempotency-Key reach a write only as arguments (`deadline`, `keyed`), never through the flow.
  if (!store) return fn();
  return store.run({ [REQUEST_ID]: requestId, [ABANDONED]: abandoned }, fn);
}

/**
 * Whether the current invocation was given up. Lambda ends a function at its timeout, and
 * whatever it was doing stops with it; one local process cannot stop a promise chain, so the
 * local runtime refuses the abandoned invocation's further AWS calls instead (local/server.ts):
 * it changes nothing after its client got the timeout answer.
 */
export function invocationAbandoned(): boolean {
  return (store?.getContext()?.[ABANDONED] as AbortSignal | undefined)?.aborted === true;
}

/** The error an abandoned invocation's AWS calls fail with. */
export class InvocationAbandoned extends Error {
  constructor() {
    super('The invocation ran past its function timeout: its work is abandoned.');
  }
}

/**
 * Client middleware (added with `REFUSE_ABANDONED`): refuses every call of an abandoned
 * invocation before it is sent.
 */
export const refuseAbandonedCalls =
  <A, R>(next: (args: A) => Promise<R>) =>
  async (args: A): Promise<R> => {
    if (invocationAbandoned()) throw new InvocationAbandoned();
    return next(args);
  };
export const REFUSE_ABANDONED = { step: 'initialize', name: 'refuseAbandonedCalls' } as const;

/**
 * The local flush queue's name (local/sqs.ts creates it): the records of its flush signals and
 * of the stream checks (local/stream-timers.ts), which ride on it in AWS, name it.
 */
export const FLUSH_QUEUE_NAME = 'dispatch-flush';

/**
 * An SQS record as Lambda's event source mapping hands it to a function: the local pollers and
 * timers (local/sqs.ts, local/stream-timers.ts) build their events from these.
 */
export function sqsRecord(
  message: { MessageId?: string; ReceiptHandle?: string; Body?: string; MD5OfBody?: string },
  queueName: string,
  receiveCount = 1,
): SQSRecord {
  const now = String(Date.now());
  return {
    messageId: message.MessageId ?? randomUUID(),
    receiptHandle: message.ReceiptHandle ?? 'local',
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: String(receiveCount),
      SentTimestamp: now,
      SenderId: 'local',
      ApproximateFirstReceiveTimestamp: now,
    },
    messageAttributes: {},
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:us-east-1:000000000000:${queueName}`,
    awsRegion: 'us-east-1',
  };
}
