/**
 * The DynamoDB document client (one per container) and the transaction helper every
 * mutation goes through. The client's only local difference is the endpoint.
 */
import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  TransactionCanceledException,
  TransactionConflictException,
} from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  DynamoDBDocumentClient,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type {
  BatchGetCommandInput,
  BatchWriteCommandInput,
  DeleteCommandInput,
  PutCommandInput,
  QueryCommandInput,
  TransactWriteCommandInput,
  UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { BusyError, RateLimitedError } from '../errors.js';
import { DYNAMODB_BUDGET, clientBudget } from '../platform/aws-clients.js';
import { NO_DEADLINE, callAllowanceMs, timeForWrite } from '../platform/deadline.js';
import type { Deadline } from '../platform/deadline.js';
import { env } from '../platform/env.js';
import { currentInvocation } from '../platform/invocation.js';
import { backoff, retry } from '../platform/retry.js';
import type { RetryPolicy } from '../platform/retry.js';
import { callStarted, recordCall } from '../platform/usage.js';
import { ringWriteBell } from '../platform/write-bell.js';

const READS = new Set(['GetItemCommand', 'QueryCommand', 'BatchGetItemCommand', 'TransactGetItemsCommand']);
const WRITES = new Set([
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'TransactWriteItemsCommand',
  'BatchWriteItemCommand',
]);

let client: DynamoDBDocumentClient | undefined;

/** The shared document client; built on first use so tests can set the environment first. */
export function ddb(): DynamoDBDocumentClient {
  if (client) return client;
  const { AWS_REGION, DYNAMODB_ENDPOINT } = env();
  const base = new DynamoDBClient({
    region: AWS_REGION,
    endpoint: DYNAMODB_ENDPOINT,
    // Timeouts and attempts that end inside every route's timeout (platform/aws-clients.ts). A
    // Lambda instance serves one request at a time, so the SDK's 50 sockets are plenty; the local
    // runtime (DYNAMODB_ENDPOINT set) serves every request from one process and client.
    ...clientBudget(DYNAMODB_BUDGET, DYNAMODB_ENDPOINT ? { keepAlive: true, maxSockets: 256 } : undefined),
  });
  // Every data-plane call reports its consumed capacity, so each request knows its cost.
  base.middlewareStack.add(
    (next, context) => async (args) => {
      const name = context.commandName ?? '';
      const kind = READS.has(name) ? 'read' : WRITES.has(name) ? 'write' : undefined;
      if (!kind) return next(args);
      (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity ??= 'TOTAL';
      const finished = callStarted();
      try {
        const out = await next(args);
        finished();
        recordCall((out.output as { ConsumedCapacity?: never }).ConsumedCapacity, kind);
        if (kind === 'write') ringWriteBell();
        return out;
      } catch (error) {
        finished();
        // A failed call still costs a round trip (and, for a failed condition, write units
        // that the error does not report): count it.
        recordCall(undefined, kind);
        throw error;
      }
    },
    { step: 'initialize', name: 'consumedCapacity' },
  );
  // Outermost: no call is waited for into the invocation's last seconds (platform/deadline.ts). A
  // middleware is handed no argument: it finds the deadline in the invocation's record
  // (platform/invocation.ts), none outside an HTTP invocation.
  base.middlewareStack.add(
    (next, context) => (args) =>
      withinDeadline(context.commandName ?? '', currentInvocation()?.deadline ?? NO_DEADLINE, () => next(args)),
    { step: 'initialize', name: 'invocationDeadline', priority: 'high' },
  );
  client = DynamoDBDocumentClient.from(base, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
  return client;
}

export const tableName = (): string => env().TABLE_NAME;

/**
 * A write whose call was still unanswered when the invocation's time ran out: it may have been
 * applied or not. Answered as the contract's 500 INTERNAL_ERROR (never 429, which promises that
 * nothing changed); a client that sent an Idempotency-Key learns the outcome from its retry.
 */
export class UncertainWrite extends Error {
  constructor(command: string) {
    super(`${command} was still unanswered when the invocation's time ran out: its outcome is unknown.`);
    this.name = 'UncertainWrite';
  }
}

/**
 * Runs a bookkeeping write whose effect is harmless if it lands without the request's own (an
 * event number reserved: a hole readers skip; a rate-limit lease: writes counted): when DynamoDB
 * does not answer it in time (the SDK's attempts timed out, or the invocation's time ran out),
 * the service is overloaded, and the request answers 429 with Retry-After instead of 500.
 */
export async function bookkeeping<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (error instanceof UncertainWrite || (error as Error).name === 'TimeoutError') throw new BusyError();
    throw error;
  }
}

/** A read whose every attempt timed out (connecting or answering) changed nothing: 429, not 500. */
const readOrBusy =
  <T>(read: () => Promise<T>) =>
  (): Promise<T> =>
    read().catch((error: unknown) => {
      throw (error as Error).name === 'TimeoutError' ? new BusyError() : error;
    });

/**
 * Runs one DynamoDB call within the invocation's deadline (platform/deadline.ts): a call that
 * would start in the last seconds is not sent (429, nothing changed), and one still unanswered
 * then is given up: a read with 429, a write with UncertainWrite. A read whose SDK attempts all
 * timed out answers 429 as well: DynamoDB is overloaded, and nothing was written.
 */
async function withinDeadline<T>(command: string, deadline: Deadline, call: () => Promise<T>): Promise<T> {
  const allowance = callAllowanceMs(deadline);
  if (allowance === Infinity) return call();
  if (allowance <= 0) throw new BusyError();
  if (READS.has(command)) call = readOrBusy(call);
  let timer: NodeJS.Timeout | undefined;
  const cutOff = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(READS.has(command) ? new BusyError() : new UncertainWrite(command)), allowance);
  });
  try {
    return await Promise.race([call(), cutOff]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Every item a Query matches, page after page (each page is one call and at most 1 MB).
 * For ranges known to be small or wanted whole; lists with a limit page by themselves.
 */
export async function queryAll(
  input: Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey'>,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await ddb().send(new QueryCommand({ ...input, TableName: tableName(), ExclusiveStartKey: start }));
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

/** The COUNT of a Query's matches, page after page (Select COUNT still reads every item). */
export async function countAll(
  input: Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey' | 'Select'>,
): Promise<number> {
  let count = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const out = await ddb().send(
      new QueryCommand({ ...input, TableName: tableName(), Select: 'COUNT', ExclusiveStartKey: start }),
    );
    count += out.Count ?? 0;
    start = out.LastEvaluatedKey;
  } while (start);
  return count;
}

/**
 * The answer of a conditional single-item write: `ok` when it was applied (with the item's
 * attributes when the input asked for ReturnValues), otherwise the item as it was when the input
 * asked for ReturnValuesOnConditionCheckFailure: 'ALL_OLD' (undefined when absent or not asked).
 * Other errors are thrown as they are.
 */
export type Conditional =
  { ok: true; item: Record<string, unknown> | undefined } | { ok: false; old: Record<string, unknown> | undefined };

async function conditional(send: () => Promise<{ Attributes?: Record<string, unknown> }>): Promise<Conditional> {
  try {
    const out = await send();
    return { ok: true, item: out.Attributes };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    return { ok: false, old: error.Item ? unmarshall(error.Item) : undefined };
  }
}

/** A PutItem that lands only where its ConditionExpression holds. */
export const putIf = (input: Omit<PutCommandInput, 'TableName'>): Promise<Conditional> =>
  conditional(() => ddb().send(new PutCommand({ ...input, TableName: tableName() })));

/** A PutItem that lands only where no item has its key. */
export const putIfAbsent = (input: Omit<PutCommandInput, 'TableName' | 'ConditionExpression'>): Promise<Conditional> =>
  putIf({ ...input, ConditionExpression: 'attribute_not_exists(pk)' });

/** An UpdateItem that lands only where its ConditionExpression holds. */
export const updateIf = (input: Omit<UpdateCommandInput, 'TableName'>): Promise<Conditional> =>
  conditional(() => ddb().send(new UpdateCommand({ ...input, TableName: tableName() })));

/** A DeleteItem that lands only where its ConditionExpression holds. */
export const deleteIf = (input: Omit<DeleteCommandInput, 'TableName'>): Promise<Conditional> =>
  conditional(() => ddb().send(new DeleteCommand({ ...input, TableName: tableName() })));

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** A transaction's Put of a new item: it fails its condition where an item has the key. */
export const putNew = (Item: Record<string, unknown>): TransactItem => ({
  Put: { TableName: tableName(), Item, ConditionExpression: 'attribute_not_exists(pk)' },
});

/**
 * A transaction item with its own answer to a failed condition: `onConditionFailed` gets the
 * item as it was (when the item asked for it with ReturnValuesOnConditionCheckFailure: ALL_OLD;
 * otherwise undefined), already unmarshalled, and returns the domain error to throw (or
 * undefined to rethrow DynamoDB's). No caller needs to know its item's position.
 */
export interface GuardedItem {
  item: TransactItem;
  onConditionFailed: (old: Record<string, unknown> | undefined) => Error | undefined;
  /** Called once the transaction holding the item has committed. */
  onCommitted?: () => void;
}

export type TransactWrite = TransactItem | GuardedItem;

const isGuarded = (w: TransactWrite): w is GuardedItem => 'onConditionFailed' in w;

/** Attaches a condition-failure answer to an item (see GuardedItem). */
export const guarded = (item: TransactItem, onConditionFailed: GuardedItem['onConditionFailed']): GuardedItem => ({
  item,
  onConditionFailed,
});

/**
 * Writes all items in one TransactWriteItems (all or nothing). A conflict with another
 * transaction is retried with jittered backoff, and answered 429 (BusyError) if it outlasts the
 * retries; a failed condition is answered by the failing item's own `onConditionFailed` (see
 * `guarded`), or rethrown as DynamoDB's error. No attempt starts once the time for writes before
 * `deadline` is over (platform/deadline.ts; NO_DEADLINE outside an HTTP invocation): 429 as well,
 * so the callers' own retry loops (a redo on fresh data) end there too, having written nothing.
 */
export async function transact(writes: TransactWrite[], deadline: Deadline): Promise<void> {
  const items = writes.map((w) => (isGuarded(w) ? w.item : w));
  if (!timeForWrite(deadline)) throw new BusyError();
  await retry(transactionConflicts(deadline), async () => {
    try {
      await ddb().send(new TransactWriteCommand({ TransactItems: items }));
    } catch (error) {
      throw conditionAnswer(writes, error) ?? error;
    }
  });
  for (const w of writes) if (isGuarded(w)) w.onCommitted?.();
}

/** The failing item's own answer to a failed condition in a cancelled transaction, if it has one. */
function conditionAnswer(writes: TransactWrite[], error: unknown): Error | undefined {
  if (!(error instanceof TransactionCanceledException)) return undefined;
  const reasons = error.CancellationReasons ?? [];
  const failed = reasons.findIndex((r) => r.Code === 'ConditionalCheckFailed');
  const write = writes[failed];
  if (!write || !isGuarded(write)) return undefined;
  const raw = (reasons[failed] as { Item?: Record<string, unknown> }).Item;
  return write.onConditionFailed(raw ? unmarshall(raw as never) : undefined);
}

/** A transaction cancelled only by other transactions on its items: nothing was written. */
const cancelledByConflict = (error: unknown): boolean => {
  if (!(error instanceof TransactionCanceledException)) return false;
  const codes = (error.CancellationReasons ?? []).map((r) => r.Code);
  return !codes.includes('ConditionalCheckFailed') && codes.includes('TransactionConflict');
};

/**
 * Conflicts with other transactions on the same items (hot items: a busy chat, a popular tag's
 * catalog entry) are retried for a time budget, not a count, so a loaded table gets as many tries
 * as fit (small beside a function's 15 s); no try starts once the invocation's time for writes is
 * over. Then 429 with Retry-After: nothing was written.
 */
const transactionConflicts = (deadline: Deadline): RetryPolicy => ({
  attempts: Infinity,
  budgetMs: 3000,
  backoff: backoff.fullJitter(20, 500),
  retryable: cancelledByConflict,
  mayRetry: () => timeForWrite(deadline),
  exhausted: () => new BusyError(),
});

/**
 * Retries a single-item write (PutItem, UpdateItem, DeleteItem) that met an in-flight
 * transaction on the same item: DynamoDB rejects it with TransactionConflictException, which
 * the SDK does not retry by itself. Past the retries, or past the time for writes before
 * `deadline`, 429 (BusyError): nothing was written.
 */
export const retryConflicts = <T>(deadline: Deadline, fn: () => Promise<T>): Promise<T> =>
  retry(singleItemConflicts(deadline), fn);

const singleItemConflicts = (deadline: Deadline): RetryPolicy => ({
  attempts: 9,
  backoff: backoff.fullJitter(10),
  retryable: (error) => error instanceof TransactionConflictException,
  mayRetry: () => timeForWrite(deadline),
  exhausted: () => new BusyError(),
});

/** A read DynamoDB kept throttling past its retries: nothing changed, the client may retry (429). */
export class ThrottledReadError extends RateLimitedError {
  constructor(readonly unprocessedKeys: number) {
    super(1, 'The table is busy. Retry shortly.');
  }
}

/**
 * The items among `keys` that exist: 100 keys per BatchGetItem (`read`: its other settings,
 * such as ConsistentRead or a projection), asking again for the keys DynamoDB leaves unprocessed
 * (throttling) as `policy` allows; keys still unprocessed then are a ThrottledReadError (429).
 */
export async function getMany(
  keys: readonly Record<string, unknown>[],
  read: Omit<NonNullable<BatchGetCommandInput['RequestItems']>[string], 'Keys'>,
  policy: RetryPolicy<unknown[]>,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  for (let i = 0; i < keys.length; i += 100) {
    let batch = keys.slice(i, i + 100);
    batch = await retry(policy, async () => {
      const out = await ddb().send(new BatchGetCommand({ RequestItems: { [tableName()]: { ...read, Keys: batch } } }));
      items.push(...(out.Responses?.[tableName()] ?? []));
      return (batch = out.UnprocessedKeys?.[tableName()]?.Keys ?? []);
    });
    if (batch.length > 0) throw new ThrottledReadError(batch.length);
  }
  return items;
}

type WriteRequest = NonNullable<BatchWriteCommandInput['RequestItems']>[string][number];

/**
 * Puts and deletes, 25 per BatchWriteItem, sending again what DynamoDB leaves unprocessed as
 * `policy` allows; requests still unprocessed then are an error. Not atomic: for bookkeeping and
 * cleanup whose every step is safe to repeat.
 */
export async function writeMany(requests: readonly WriteRequest[], policy: RetryPolicy<unknown[]>): Promise<void> {
  for (let i = 0; i < requests.length; i += 25) {
    let batch = requests.slice(i, i + 25);
    batch = await retry(policy, async () => {
      const out = await ddb().send(new BatchWriteCommand({ RequestItems: { [tableName()]: batch } }));
      return (batch = out.UnprocessedItems?.[tableName()] ?? []);
    });
    if (batch.length > 0) throw new Error(`writeMany: ${batch.length} writes still unprocessed`);
  }
}

/**
 * Keys or writes a batch call leaves unprocessed (DynamoDB's answer to throttling), asked for
 * again after a jittered pause that grows (25 ms, 50 ms, ... up to 400 ms: asking again at once
 * only adds to the throttling), for 2 s at most: then getMany answers 429 (a read changed
 * nothing) and writeMany fails.
 */
export const UNPROCESSED_BATCH: RetryPolicy<unknown[]> = {
  attempts: Infinity,
  budgetMs: 2000,
  backoff: backoff.fullJitter(25, 400),
  retryResult: (unprocessed) => unprocessed.length > 0,
};

/**
 * Deletes items by key, 25 per BatchWriteItem, retrying what DynamoDB leaves unprocessed.
 * Not atomic: for cleanup whose every step is safe to repeat.
 */
export const deleteMany = (keys: Record<string, unknown>[]): Promise<void> =>
  writeMany(
    keys.map((Key) => ({ DeleteRequest: { Key } })),
    UNPROCESSED_DELETES,
  );

/** What a BatchWriteItem leaves unprocessed (throttling) is sent again, 8 times at most. */
const UNPROCESSED_DELETES: RetryPolicy<unknown[]> = {
  attempts: 9,
  backoff: backoff.fullJitter(20),
  retryResult: (unprocessed) => unprocessed.length > 0,
};
