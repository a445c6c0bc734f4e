/**
 * The conditional single-item writes of store/db.ts (putIf, putIfAbsent, updateIf, deleteIf)
 * against DynamoDB Local: a failed condition is an answer ({ ok: false, old }), never an
 * exception, and changes nothing; any other error is thrown.
 */
import { describe, expect, it } from '@jest/globals';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { useApi } from '../../support/api.js';
import { ddb, deleteIf, putIf, putIfAbsent, updateIf } from '../../../functions/store/db.js';

const api = useApi();
const key = (name: string) => ({ pk: `TEST#${name}`, sk: 'TEST' });
const read = async (name: string) =>
  (await ddb().send(new GetCommand({ TableName: api.tableName, Key: key(name), ConsistentRead: true }))).Item;

describe('conditional writes', () => {
  it('putIfAbsent writes once; the second answers ok: false with the item as it was', async () => {
    expect(await putIfAbsent({ Item: { ...key('a'), n: 1 } })).toEqual({ ok: true, item: undefined });
    const second = await putIfAbsent({ Item: { ...key('a'), n: 2 }, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' });
    expect(second).toEqual({ ok: false, old: { ...key('a'), n: 1 } });
    expect((await read('a'))?.n).toBe(1);
  });

  it('updateIf answers the new item when the condition holds, the old one when it does not', async () => {
    await putIf({ Item: { ...key('b'), n: 1 } });
    const update = (expected: number) =>
      updateIf({
        Key: key('b'),
        UpdateExpression: 'SET n = n + :one',
        ConditionExpression: 'n = :expected',
        ExpressionAttributeValues: { ':one': 1, ':expected': expected },
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      });
    expect(await update(1)).toEqual({ ok: true, item: { ...key('b'), n: 2 } });
    expect(await update(1)).toEqual({ ok: false, old: { ...key('b'), n: 2 } });
    expect((await read('b'))?.n).toBe(2);
  });

  it('a failed condition without ALL_OLD answers old: undefined; an absent item likewise', async () => {
    const out = await updateIf({
      Key: key('absent'),
      UpdateExpression: 'SET n = :one',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':one': 1 },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    expect(out).toEqual({ ok: false, old: undefined });
    expect(await read('absent')).toBeUndefined();
  });

  it('deleteIf deletes only where its condition holds', async () => {
    await putIf({ Item: { ...key('c'), owner: 'me' } });
    const remove = (owner: string) =>
      deleteIf({
        Key: key('c'),
        ConditionExpression: '#owner = :owner',
        ExpressionAttributeNames: { '#owner': 'owner' },
        ExpressionAttributeValues: { ':owner': owner },
      });
    expect((await remove('someone else')).ok).toBe(false);
    expect(await read('c')).toBeDefined();
    expect((await remove('me')).ok).toBe(true);
    expect(await read('c')).toBeUndefined();
  });

  it('an error that is not a failed condition is thrown', async () => {
    await expect(
      updateIf({ Key: key('d'), UpdateExpression: 'SET n = :v', ConditionExpression: 'n = :missing' }),
    ).rejects.toThrow();
  });
});
