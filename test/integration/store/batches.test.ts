/**
 * The batch helpers of store/db.ts (getMany, writeMany, deleteMany) against DynamoDB Local: calls
 * of at most 100 keys / 25 writes, and what DynamoDB leaves unprocessed (throttling) asked for
 * again as the policy allows, then an error. A spy on the document client leaves part of a call
 * unprocessed; every other call is passed through.
 */
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { BatchGetCommand, BatchWriteCommand, DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { useApi } from '../../support/api.js';
import {
  ThrottledReadError,
  UNPROCESSED_BATCH,
  ddb,
  deleteMany,
  getMany,
  putNew,
  transact,
  writeMany,
} from '../../../functions/store/db.js';
import { NO_DEADLINE } from '../../../functions/platform/deadline.js';
import type { RetryPolicy } from '../../../functions/platform/retry.js';

const api = useApi();
const key = (group: string, n: number) => ({ pk: `BATCH#${group}#${n}`, sk: 'BATCH' });
const keys = (group: string, count: number) => Array.from({ length: count }, (_, n) => key(group, n));
const put = (group: string, count: number) =>
  writeMany(
    keys(group, count).map((k, n) => ({ PutRequest: { Item: { ...k, n } } })),
    UNPROCESSED_BATCH,
  );
const read = async (k: Record<string, unknown>) =>
  (await ddb().send(new GetCommand({ TableName: api.tableName, Key: k, ConsistentRead: true }))).Item;

type Send = (...args: unknown[]) => Promise<unknown>;
const send = DynamoDBDocumentClient.prototype.send as unknown as Send;

/**
 * Spies on the client: each call of `Command` goes through `shape`, which may send a smaller
 * request (`pass`) and answer for the rest as unprocessed. Returns the sizes of the calls made.
 */
function throttle<C extends typeof BatchGetCommand | typeof BatchWriteCommand>(
  Command: C,
  shape: (
    input: InstanceType<C>['input'],
    pass: (input: InstanceType<C>['input']) => Promise<unknown>,
  ) => Promise<unknown>,
): number[] {
  const sizes: number[] = [];
  jest.spyOn(DynamoDBDocumentClient.prototype, 'send').mockImplementation(async function (
    this: DynamoDBDocumentClient,
    ...args: unknown[]
  ) {
    const command = args[0];
    if (!(command instanceof Command)) return send.apply(this, args);
    const request = Object.values(command.input.RequestItems ?? {})[0] as { Keys?: unknown[] } | unknown[];
    sizes.push(Array.isArray(request) ? request.length : (request.Keys?.length ?? 0));
    return shape(command.input as InstanceType<C>['input'], (input) =>
      send.apply(this, [new (Command as new (i: unknown) => unknown)(input), ...args.slice(1)]),
    );
  });
  return sizes;
}

afterEach(() => {
  jest.restoreAllMocks();
});

describe('getMany', () => {
  it('reads 100 keys a call and answers the items that exist', async () => {
    await put('read', 150);
    const sizes = throttle(BatchGetCommand, (input, pass) => pass(input));
    const items = await getMany([...keys('read', 150), key('absent', 0)], { ConsistentRead: true }, UNPROCESSED_BATCH);
    expect(items.map((i) => i.n).sort((a, b) => Number(a) - Number(b))).toEqual(
      Array.from({ length: 150 }, (_, n) => n),
    );
    expect(sizes).toEqual([100, 51]);
  });

  it('asks again for the keys a call left unprocessed', async () => {
    await put('unprocessed', 10);
    let throttled = false;
    const sizes = throttle(BatchGetCommand, async (input, pass) => {
      const [table, request] = Object.entries(input.RequestItems!)[0]!;
      if (throttled) return pass(input);
      throttled = true;
      // Only the first 3 keys are read; the other 7 come back unprocessed.
      const out = (await pass({
        RequestItems: { [table]: { ...request, Keys: request.Keys!.slice(0, 3) } },
      })) as object;
      return { ...out, UnprocessedKeys: { [table]: { ...request, Keys: request.Keys!.slice(3) } } };
    });
    const items = await getMany(keys('unprocessed', 10), { ConsistentRead: true }, UNPROCESSED_BATCH);
    expect(items).toHaveLength(10);
    expect(sizes).toEqual([10, 7]);
  });

  it('answers 429 (Retry-After 1) once the policy gives up on keys still unprocessed', async () => {
    const twice: RetryPolicy<unknown[]> = { attempts: 2, backoff: () => 0, retryResult: (u) => u.length > 0 };
    const sizes = throttle(BatchGetCommand, async (input) => ({ Responses: {}, UnprocessedKeys: input.RequestItems }));
    const error = await getMany(keys('never', 4), {}, twice).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ThrottledReadError);
    expect(error).toMatchObject({ status: 429, code: 'RATE_LIMIT_ERROR', unprocessedKeys: 4 });
    expect((error as ThrottledReadError).headers).toEqual({ 'retry-after': '1' });
    expect(sizes).toEqual([4, 4]);
  });

  it('UNPROCESSED_BATCH pauses, growing, between asks and gives up after 2 s (it used to ask at once, forever)', async () => {
    const at: number[] = [];
    throttle(BatchGetCommand, async (input) => {
      at.push(Date.now());
      return { Responses: {}, UnprocessedKeys: input.RequestItems };
    });
    const error = await getMany(keys('throttled', 3), {}, UNPROCESSED_BATCH).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ThrottledReadError);
    // No retry starts once 2 s have passed; with pauses of up to 25·2^(n-1) ms (400 at most) that
    // is a few dozen asks at most, against thousands for asking again at once (and it never ended).
    expect(at.length).toBeGreaterThan(2);
    expect(at.length).toBeLessThan(60);
    // The policy's pauses: full jitter under a cap that doubles from 25 ms up to 400 ms.
    const cap = (tries: number) => Math.min(400, 25 * 2 ** (tries - 1));
    for (let tries = 1; tries <= 8; tries++) {
      for (let i = 0; i < 50; i++) {
        const pause = UNPROCESSED_BATCH.backoff(tries);
        expect(pause).toBeGreaterThanOrEqual(0);
        expect(pause).toBeLessThan(cap(tries));
      }
    }
  });
});

describe('writeMany and deleteMany', () => {
  it('writes 25 a call and sends again what a call left unprocessed', async () => {
    let throttled = false;
    const sizes = throttle(BatchWriteCommand, async (input, pass) => {
      const [table, requests] = Object.entries(input.RequestItems!)[0]!;
      if (throttled) return pass(input);
      throttled = true;
      await pass({ RequestItems: { [table]: requests.slice(0, 20) } });
      return { UnprocessedItems: { [table]: requests.slice(20) } };
    });
    await put('write', 30);
    expect(sizes).toEqual([25, 5, 5]);
    for (const k of keys('write', 30)) expect(await read(k)).toBeDefined();

    jest.restoreAllMocks();
    await deleteMany(keys('write', 30));
    for (const k of keys('write', 30)) expect(await read(k)).toBeUndefined();
  });

  it('deleteMany fails after 9 calls that leave deletes unprocessed, deleting nothing', async () => {
    await put('stuck', 2);
    const sizes = throttle(BatchWriteCommand, async (input) => ({ UnprocessedItems: input.RequestItems }));
    await expect(deleteMany(keys('stuck', 2))).rejects.toThrow('writeMany: 2 writes still unprocessed');
    expect(sizes).toEqual(Array(9).fill(2));
    jest.restoreAllMocks();
    for (const k of keys('stuck', 2)) expect(await read(k)).toBeDefined();
  });
});

describe('putNew', () => {
  it('puts an item in a transaction only where none has its key', async () => {
    await transact([putNew({ ...key('new', 0), n: 1 })], NO_DEADLINE);
    await expect(transact([putNew({ ...key('new', 0), n: 2 })], NO_DEADLINE)).rejects.toThrow();
    expect((await read(key('new', 0)))?.n).toBe(1);
  });
});
