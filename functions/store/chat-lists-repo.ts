/**
 * Chat listings: a page of chats in list order with the §5.3.2 filters (gsi1, gsi2), and the
 * chats that may need attention for the summaries (the sparse gsi3).
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { ChatRecord } from './chats-repo.js';
import { ddb, queryAll, tableName } from './db.js';
import { Keys } from './keys.js';

export interface ChatPageQuery {
  archived?: boolean;
  tag?: string;
  agentId?: string;
  /** Lower-cased title substring. */
  titleContains?: string;
  limit: number;
  after?: { sortKey: string; chatId: string };
}

/**
 * One page of chats in list order. Unfiltered, it is one Query of limit+1 items. With a
 * tag, agent or title filter, DynamoDB applies a FilterExpression after reading, so this keeps
 * reading pages of 100 until limit+1 matches are found or the index ends: a selective filter
 * costs reads in proportion to the chats it skips (capacity is charged on items read).
 */
export async function queryChats(
  q: ChatPageQuery,
): Promise<{ chats: ChatRecord[]; hasMore: boolean; sortKeyOf: (c: ChatRecord) => string }> {
  const { index, pkName, pk } = Keys.chatsIndex(q.archived);
  const filters: string[] = [];
  const values: Record<string, unknown> = { ':pk': pk };
  if (q.tag) {
    filters.push('contains(tags, :tag)');
    values[':tag'] = q.tag;
  }
  if (q.agentId) {
    filters.push('contains(agent_ids, :agent)');
    values[':agent'] = q.agentId;
  }
  if (q.titleContains) {
    filters.push('contains(title_lc, :title)');
    values[':title'] = q.titleContains;
  }
  const want = q.limit + 1;
  const found: ChatRecord[] = [];
  let start: Record<string, unknown> | undefined = q.after
    ? { ...Keys.chat(q.after.chatId), [pkName]: pk, gsi1sk: q.after.sortKey }
    : undefined;
  do {
    const input: QueryCommandInput = {
      TableName: tableName(),
      IndexName: index,
      KeyConditionExpression: `${pkName} = :pk`,
      ExpressionAttributeValues: values,
      ScanIndexForward: false,
      Limit: filters.length > 0 ? 100 : want - found.length,
      ExclusiveStartKey: start,
      ...(filters.length > 0 ? { FilterExpression: filters.join(' AND ') } : {}),
    };
    const out = await ddb().send(new QueryCommand(input));
    found.push(...((out.Items ?? []) as ChatRecord[]));
    start = out.LastEvaluatedKey;
  } while (found.length < want && start);
  return {
    chats: found.slice(0, q.limit),
    hasMore: found.length > q.limit,
    sortKeyOf: (c) => Keys.chatListing(c).gsi1sk,
  };
}

export interface AttentionEntry {
  unread_count: number;
  pending_requests_count: number;
  agent_ids: string[];
  is_archived: boolean;
}

/**
 * Every chat that may have unread messages or pending requests, from the sparse gsi3 with
 * its small projection. Cost grows with chats needing attention, not with all chats.
 */
export async function chatsNeedingAttention(): Promise<AttentionEntry[]> {
  const { index, pkName, pk } = Keys.attentionIndex;
  const entries = (await queryAll({
    IndexName: index,
    KeyConditionExpression: `${pkName} = :pk`,
    ExpressionAttributeValues: { ':pk': pk },
  })) as unknown as AttentionEntry[];
  return entries;
}
