/**
 * A data folder from before the approvals list (issue 36): its request items lack the gsi1/gsi2
 * keys that put them in `GET /requests` (functions/store/keys.ts requestListing). `npm start`
 * gives them those keys once, at its first start on such a folder, then marks the folder done (a
 * setting item), so later starts cost one GetItem. A Scan, which the functions never use, is fine
 * here: the local table is one person's data, read once. A closed request's list position is its
 * `resolved_at`, or for a cancelled one (whose cancel time was not kept then) its creation time.
 */
import { GetCommand, PutCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../functions/store/db.js';
import { Keys } from '../functions/store/keys.js';

const DONE = Keys.setting('migration:request-listing');

/** Gives the listing keys to every request item without them; returns how many it changed. */
export async function backfillRequestListing(): Promise<number> {
  const done = await ddb().send(new GetCommand({ TableName: tableName(), Key: DONE, ConsistentRead: true }));
  if (done.Item) return 0;
  let changed = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await ddb().send(
      new ScanCommand({
        TableName: tableName(),
        FilterExpression: '#type = :request AND attribute_not_exists(gsi1pk)',
        ExpressionAttributeNames: { '#type': 'type' },
        ExpressionAttributeValues: { ':request': 'request' },
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) {
      const deadline = item.deadline as { at?: string } | null | undefined;
      const listing = Keys.requestListing({
        id: String(item.id),
        status: String(item.status),
        created_at: String(item.created_at),
        deadlineAt: deadline?.at ?? null,
        closedAt: item.status === 'pending' ? null : ((item.resolved_at as string | null) ?? String(item.created_at)),
      });
      const updated = await ddb()
        .send(
          new UpdateCommand({
            TableName: tableName(),
            Key: { pk: item.pk, sk: item.sk },
            UpdateExpression: 'SET gsi1pk = :g1pk, gsi2pk = :g2pk, gsi1sk = :g1sk',
            ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(gsi1pk)',
            ExpressionAttributeValues: { ':g1pk': listing.gsi1pk, ':g2pk': listing.gsi2pk, ':g1sk': listing.gsi1sk },
          }),
        )
        .then(
          () => true,
          (error: unknown) => {
            // A request a live write gave its keys meanwhile is fine as it is.
            if ((error as { name?: string }).name !== 'ConditionalCheckFailedException') throw error;
            return false;
          },
        );
      if (updated) changed++;
    }
    start = page.LastEvaluatedKey;
  } while (start);
  await ddb().send(
    new PutCommand({ TableName: tableName(), Item: { ...DONE, type: 'setting', at: new Date().toISOString() } }),
  );
  return changed;
}
