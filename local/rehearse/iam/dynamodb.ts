/**
 * A DynamoDB request (JSON protocol, `X-Amz-Target: DynamoDB_20120810.<Op>` or
 * `DynamoDBStreams_20120810.<Op>`) as the authorization checks IAM makes for it:
 * - Get/Put/Update/DeleteItem: `dynamodb:<Op>` on the table, dynamodb:LeadingKeys = the item's
 *   partition key value;
 * - Query: on the table or `<table>/index/<index>`, LeadingKeys = the partition key value of the
 *   key condition (of the index's partition key on an index);
 * - BatchGetItem/BatchWriteItem: one check per table with all of the batch's partition keys;
 * - TransactGetItems/TransactWriteItems: one check per item, as GetItem, PutItem, UpdateItem,
 *   DeleteItem or ConditionCheckItem with its own key (one denied item denies the whole call);
 * - PartiQL (ExecuteStatement…): dynamodb:PartiQL<Verb> on the statement's table, no LeadingKeys;
 * - anything else: `dynamodb:<Op>` on the table named (TableName, ResourceArn), or `*`;
 * - streams: DescribeStream/GetShardIterator/GetRecords on the stream ARN (GetRecords finds it
 *   in the shard iterator, which carries it in AWS and in DynamoDB Local alike), ListStreams on `*`.
 * Partition key names come from `partitionKeyOf` (the gateway asks the upstream's DescribeTable
 * once per table). A key attribute's value is given to IAM as its string, number or base64 text.
 */
import { list, obj, text } from './types.js';
import type { Body, Check } from './types.js';

export type PartitionKeyOf = (table: string, index?: string) => Promise<string | undefined>;

export const DYNAMODB_TARGET = 'DynamoDB_20120810.';
export const STREAMS_TARGET = 'DynamoDBStreams_20120810.';

export interface Place {
  account: string;
  region: string;
}

/** A table's name as the request gives it (a name or, as DynamoDB also takes, its ARN) → its ARN and name. */
function table(place: Place, nameOrArn: string): { arn: string; name: string } {
  if (nameOrArn.startsWith('arn:')) return { arn: nameOrArn, name: nameOrArn.slice(nameOrArn.indexOf(':table/') + 7) };
  return { arn: `arn:aws:dynamodb:${place.region}:${place.account}:table/${nameOrArn}`, name: nameOrArn };
}

/** A key attribute's value as IAM compares it: the text of a string, number or binary (base64). */
function scalar(value: unknown): string | undefined {
  const typed = obj(value);
  return text(typed.S) ?? text(typed.N) ?? text(typed.B);
}

const leading = (keys: (string | undefined)[]): Record<string, string[]> => {
  const values = [...new Set(keys.filter((k): k is string => k !== undefined))];
  return values.length > 0 ? { 'dynamodb:LeadingKeys': values } : {};
};

/** The partition key value of a Query: an equality on `pk` in its key condition (expression or legacy). */
export function queryPartitionValue(body: Body, pk: string): string | undefined {
  const legacy = obj(obj(body.KeyConditions)[pk]);
  if (legacy.ComparisonOperator === 'EQ') return scalar(list(legacy.AttributeValueList)[0]);
  const expression = text(body.KeyConditionExpression);
  if (expression === undefined) return undefined;
  const names = obj(body.ExpressionAttributeNames);
  const values = obj(body.ExpressionAttributeValues);
  const name = (token: string) => (token.startsWith('#') ? text(names[token]) : token);
  // Key conditions are `pk = :v` AND one sort key condition; BETWEEN's own AND splits harmlessly.
  for (const clause of expression.split(/\s+AND\s+/i)) {
    const m = /^\s*\(*\s*([#\w.-]+|:[\w-]+)\s*=\s*([#\w.-]+|:[\w-]+)\s*\)*\s*$/.exec(clause);
    if (!m) continue;
    const [left, right] = [m[1]!, m[2]!];
    if (right.startsWith(':') && name(left) === pk) return scalar(values[right]);
    if (left.startsWith(':') && name(right) === pk) return scalar(values[left]);
  }
  return undefined;
}

const PARTIQL_VERBS: Record<string, string> = {
  SELECT: 'PartiQLSelect',
  INSERT: 'PartiQLInsert',
  UPDATE: 'PartiQLUpdate',
  DELETE: 'PartiQLDelete',
};

function partiqlCheck(place: Place, statement: unknown): Check {
  const text = typeof statement === 'string' ? statement.trim() : '';
  const verb = PARTIQL_VERBS[text.split(/\s+/)[0]?.toUpperCase() ?? ''] ?? 'PartiQLSelect';
  const m = /(?:\bFROM|\bINTO|^UPDATE)\s+"?([\w.-]+)"?/i.exec(text);
  return { action: `dynamodb:${verb}`, resource: m ? table(place, m[1]!).arn : '*' };
}

/** The stream ARN in DynamoDB Local's and AWS's form, with the rehearsal's region and account. */
export function streamArnOf(place: Place, text: string | undefined): string | undefined {
  const m = /arn:aws:dynamodb:[^:|]*:[^:|]*:(table\/[^|/]+\/stream\/[^|]+)/.exec(text ?? '');
  return m ? `arn:aws:dynamodb:${place.region}:${place.account}:${m[1]}` : undefined;
}

function streamChecks(place: Place, operation: string, body: Body): Check[] {
  const action = `dynamodb:${operation}`;
  if (operation === 'ListStreams') return [{ action, resource: '*' }];
  const arn = streamArnOf(place, text(operation === 'GetRecords' ? body.ShardIterator : body.StreamArn));
  return [{ action, resource: arn ?? '*' }];
}

/** The checks of one request; `target` is its X-Amz-Target. */
export async function dynamoChecks(
  place: Place,
  target: string,
  body: Body,
  partitionKeyOf: PartitionKeyOf,
): Promise<Check[]> {
  if (target.startsWith(STREAMS_TARGET)) return streamChecks(place, target.slice(STREAMS_TARGET.length), body);
  const operation = target.slice(DYNAMODB_TARGET.length);
  const action = `dynamodb:${operation}`;
  const keyOf = async (tableName: string, item: unknown) => {
    const pk = await partitionKeyOf(table(place, tableName).name);
    return pk === undefined ? undefined : scalar(obj(item)[pk]);
  };
  const tableName = text(body.TableName) ?? '';
  const indexName = text(body.IndexName);
  switch (operation) {
    case 'GetItem':
    case 'UpdateItem':
    case 'DeleteItem':
    case 'PutItem': {
      const key = await keyOf(tableName, operation === 'PutItem' ? body.Item : body.Key);
      return [{ action, resource: table(place, tableName).arn, context: leading([key]) }];
    }
    case 'Query': {
      const t = table(place, tableName);
      const pk = await partitionKeyOf(t.name, indexName);
      const value = pk === undefined ? undefined : queryPartitionValue(body, pk);
      return [{ action, resource: indexName ? `${t.arn}/index/${indexName}` : t.arn, context: leading([value]) }];
    }
    case 'Scan': {
      const t = table(place, tableName);
      return [{ action, resource: indexName ? `${t.arn}/index/${indexName}` : t.arn }];
    }
    case 'BatchGetItem':
    case 'BatchWriteItem': {
      const checks: Check[] = [];
      for (const [name, request] of Object.entries(obj(body.RequestItems))) {
        const items =
          operation === 'BatchGetItem'
            ? list(obj(request).Keys)
            : list(request).map((r) => obj(obj(r).PutRequest).Item ?? obj(obj(r).DeleteRequest).Key);
        const keys = await Promise.all(items.map((item) => keyOf(name, item)));
        checks.push({ action, resource: table(place, name).arn, context: leading(keys) });
      }
      return checks;
    }
    case 'TransactGetItems':
    case 'TransactWriteItems': {
      const kinds: Record<string, [string, 'Key' | 'Item']> = {
        Get: ['GetItem', 'Key'],
        Put: ['PutItem', 'Item'],
        Update: ['UpdateItem', 'Key'],
        Delete: ['DeleteItem', 'Key'],
        ConditionCheck: ['ConditionCheckItem', 'Key'],
      };
      const checks: Check[] = [];
      for (const entry of list(body.TransactItems)) {
        for (const [kind, [itemAction, field]] of Object.entries(kinds)) {
          const part = obj(entry)[kind];
          if (part === undefined) continue;
          const name = text(obj(part).TableName) ?? '';
          const key = await keyOf(name, obj(part)[field]);
          checks.push({
            action: `dynamodb:${itemAction}`,
            resource: table(place, name).arn,
            context: leading([key]),
          });
        }
      }
      return checks;
    }
    case 'ExecuteStatement':
      return [partiqlCheck(place, body.Statement)];
    case 'BatchExecuteStatement':
      return list(body.Statements).map((s) => partiqlCheck(place, obj(s).Statement));
    case 'ExecuteTransaction':
      return list(body.TransactStatements).map((s) => partiqlCheck(place, obj(s).Statement));
    default: {
      const named = text(body.TableName) ?? text(body.ResourceArn);
      return [{ action, resource: named !== undefined ? table(place, named).arn : '*' }];
    }
  }
}
