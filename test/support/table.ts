/** Reads what the API stored, straight from the test's table. */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ddb } from '../../functions/store/db.js';
import { Keys } from '../../functions/store/keys.js';

/** The dispatch inputs stored in a chat's partition (§4.4.1), oldest first. */
export async function dispatchInputs(tableName: string, chatId: string): Promise<Record<string, any>[]> {
  const out = await ddb().send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :din)',
      ExpressionAttributeValues: { ':pk': Keys.chat(chatId).pk, ':din': 'DIN#' },
      ConsistentRead: true,
    }),
  );
  return out.Items ?? [];
}
