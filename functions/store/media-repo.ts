/**
 * Media metadata items (MEDIA#<id>/MEDIA, contract §2.4). Uploads arrive with the media
 * issue; messages already look media up and link it (§5.4.1 checks 16–18).
 */
import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import type { BatchGetCommandOutput } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from './db.js';
import type { TransactItem } from './db.js';
import { Keys } from './keys.js';

export type MediaKind = 'image' | 'audio' | 'file';

export interface MediaRecord {
  id: string;
  chat_id: string;
  message_id: string | null;
  kind: MediaKind;
  filename: string;
}

/** The media items that exist among `ids` (BatchGetItem, strongly consistent; up to 100 per call). */
export async function getMedia(ids: readonly string[]): Promise<Map<string, MediaRecord>> {
  const found = new Map<string, MediaRecord>();
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += 100) {
    let keys: Record<string, unknown>[] | undefined = unique.slice(i, i + 100).map((id) => Keys.media(id));
    while (keys && keys.length > 0) {
      const out: BatchGetCommandOutput = await ddb().send(
        new BatchGetCommand({ RequestItems: { [tableName()]: { Keys: keys, ConsistentRead: true } } }),
      );
      for (const item of out.Responses?.[tableName()] ?? []) found.set(String(item.id), item as MediaRecord);
      keys = out.UnprocessedKeys?.[tableName()]?.Keys;
    }
  }
  return found;
}

/** Links a medium to a message, only if it is still in `chatId` and unattached. */
export const linkMedia = (mediaId: string, chatId: string, messageId: string): TransactItem => ({
  Update: {
    TableName: tableName(),
    Key: Keys.media(mediaId),
    UpdateExpression: 'SET message_id = :message',
    ConditionExpression: 'chat_id = :chat AND (attribute_not_exists(message_id) OR attribute_type(message_id, :nullType))',
    ExpressionAttributeValues: { ':message': messageId, ':chat': chatId, ':nullType': 'NULL' },
  },
});
