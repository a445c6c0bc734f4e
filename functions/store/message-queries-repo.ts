/**
 * The reads of many message items: a chat's page of messages, its earliest messages, a stream's
 * chunks, a chat's open streams and their latest activity. Each is a Query (or BatchGetItem)
 * over one partition; the items themselves and their writes are in messages-repo.ts.
 */
import { BatchGetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { BatchGetCommandOutput } from '@aws-sdk/lib-dynamodb';
import type { MessageRole } from '../model.js';
import { ddb, queryAll, tableName } from './db.js';
import { Keys } from './keys.js';
import { messageKey } from './messages-repo.js';
import type { MessageLocation, MessageRecord } from './messages-repo.js';

/**
 * The latest activity (updated_at) of each streaming message among `locations`, by sort key:
 * BatchGetItem, strongly consistent (a chat read right after a chunk sees it), up to 100 keys
 * a call. Capacity is charged on the whole item (1 RRU per started 4 KB each), projection or not.
 * Messages that are no longer streaming are left out.
 */
export async function streamActivity(locations: readonly MessageLocation[]): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (let i = 0; i < locations.length; i += 100) {
    let keys: Record<string, unknown>[] | undefined = locations.slice(i, i + 100).map(messageKey);
    while (keys && keys.length > 0) {
      const out: BatchGetCommandOutput = await ddb().send(
        new BatchGetCommand({
          RequestItems: {
            [tableName()]: {
              Keys: keys,
              ConsistentRead: true,
              ProjectionExpression: 'sk, updated_at, stream_state',
            },
          },
        }),
      );
      for (const item of out.Responses?.[tableName()] ?? []) {
        if (item.stream_state === 'streaming') found.set(String(item.sk), String(item.updated_at));
      }
      keys = out.UnprocessedKeys?.[tableName()]?.Keys;
    }
  }
  return found;
}

/** The ids of a chat's messages that are streaming (their open-stream markers). */
export async function openStreams(chatId: string): Promise<string[]> {
  const { pk, skPrefix } = Keys.openStreamsOf(chatId);
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix },
    ConsistentRead: true,
  });
  const ids = items.map((item) => String(item.sk).slice(skPrefix.length));
  return ids;
}

/**
 * One page of a chat's listed messages, newest first (created_at desc, id desc), after the
 * keyset position `afterSk`. Hidden messages (§5.4.2) are filtered out by DynamoDB after
 * reading, so this keeps reading until limit+1 messages are found or the chat ends; hidden
 * messages are rare (cancelled empty streams), so a page costs about what it returns.
 */
export async function queryMessages(
  chatId: string,
  limit: number,
  afterSk: string | undefined,
): Promise<{ messages: MessageRecord[]; hasMore: boolean }> {
  const { pk, skPrefix } = Keys.messagesOf(chatId);
  const want = limit + 1;
  const found: MessageRecord[] = [];
  let start: Record<string, unknown> | undefined = afterSk ? { pk, sk: afterSk } : undefined;
  do {
    const out = await ddb().send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        FilterExpression: 'attribute_not_exists(list_hidden)',
        ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix },
        ScanIndexForward: false,
        Limit: want - found.length,
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    found.push(...((out.Items ?? []) as MessageRecord[]));
    start = out.LastEvaluatedKey;
  } while (found.length < want && start);
  return { messages: found.slice(0, limit), hasMore: found.length > limit };
}

/**
 * Chunks with from <= seq <= to, in order. Strongly consistent; costs one read unit per 4 KB
 * of chunk text returned (so callers ask only for the chunks they do not already hold).
 */
export async function readChunks(messageId: string, from: number, to: number): Promise<Map<number, string>> {
  const chunks = new Map<number, string>();
  if (to < from) return chunks;
  const { pk, skFrom, skTo } = Keys.chunkRange(messageId, from, to);
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
    ExpressionAttributeValues: { ':pk': pk, ':from': skFrom, ':to': skTo },
    ProjectionExpression: 'seq, #text',
    ExpressionAttributeNames: { '#text': 'text' },
    ConsistentRead: true,
  });
  for (const item of items) chunks.set(Number(item.seq), String(item.text));
  return chunks;
}

/**
 * A chat's first `count` messages with one of `roles`, oldest first (created_at asc, id asc),
 * with only the fields a caller reading their text needs. Other roles are filtered out by
 * DynamoDB after reading, so this keeps reading pages until `count` are found or the chat ends;
 * they are rare among a chat's first messages, so it costs about one Query of `count` items
 * (capacity is charged on whole items read, projection or not).
 */
export async function earliestMessages(
  chatId: string,
  count: number,
  roles: readonly MessageRole[],
): Promise<Pick<MessageRecord, 'role' | 'content_final' | 'created_at'>[]> {
  const { pk, skPrefix } = Keys.messagesOf(chatId);
  const roleValues = Object.fromEntries(roles.map((role, i) => [`:r${i}`, role]));
  const found: Pick<MessageRecord, 'role' | 'content_final' | 'created_at'>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await ddb().send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        FilterExpression: `#role IN (${Object.keys(roleValues).join(', ')})`,
        ProjectionExpression: '#role, content_final, created_at',
        ExpressionAttributeNames: { '#role': 'role' },
        ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix, ...roleValues },
        ScanIndexForward: true,
        Limit: count,
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    found.push(...((out.Items ?? []) as Pick<MessageRecord, 'role' | 'content_final' | 'created_at'>[]));
    start = out.LastEvaluatedKey;
  } while (found.length < count && start);
  return found.slice(0, count);
}
