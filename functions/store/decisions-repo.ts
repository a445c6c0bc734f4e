/**
 * The decision log's storage (contract §5.5.6): one partition, a head item holding the last
 * entry's seq and hash, and one item per entry keyed by its seq. An entry is appended in the
 * transaction that closes its request: the head moves from the seq the writer read to the next
 * (a condition, so two closings racing cannot take one number: the loser's transaction writes
 * nothing and it reads the head again), and the entry is put where no item is. No number is
 * taken outside a committed transaction, so the sequence has no gaps.
 *
 * An entry is stored as the canonical JSON text it was hashed from (`entry`), so that it reads
 * back byte for byte as it was chained, whatever DynamoDB's types would make of its payload.
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { GENESIS_HASH } from '../model/decision-chain.js';
import type { DecisionEntry } from '../model.js';
import { ddb, guarded, putNew, tableName } from './db.js';
import type { GuardedItem } from './db.js';
import { Keys } from './keys.js';

/** Another closing appended first: the head moved past the seq this writer read (`head`: where it is now, when known). */
export class DecisionHeadMoved extends Error {
  constructor(readonly head?: DecisionHead) {
    super('the decision log head moved');
  }
}

export interface DecisionHead {
  seq: number;
  hash: string;
}

/** The last entry's seq and hash ({0, 64 zeros} for an empty log), strongly consistent. */
export async function readHead(): Promise<DecisionHead> {
  const out = await ddb().send(
    new GetCommand({ TableName: tableName(), Key: Keys.decisionHead, ConsistentRead: true }),
  );
  return out.Item ? { seq: Number(out.Item.seq), hash: String(out.Item.hash) } : { seq: 0, hash: GENESIS_HASH };
}

/** The writes that append `entry` after `head` (in the closing's transaction). */
export function appendItems(entry: DecisionEntry, entryJson: string, head: DecisionHead): GuardedItem[] {
  const moved = (old: Record<string, unknown> | undefined) =>
    new DecisionHeadMoved(old?.seq !== undefined ? { seq: Number(old.seq), hash: String(old.hash) } : undefined);
  return [
    guarded(
      {
        Update: {
          TableName: tableName(),
          Key: Keys.decisionHead,
          UpdateExpression: 'SET seq = :seq, #hash = :hash, #type = :type',
          ConditionExpression: head.seq === 0 ? 'attribute_not_exists(pk)' : 'seq = :prev',
          ExpressionAttributeNames: { '#hash': 'hash', '#type': 'type' },
          ExpressionAttributeValues: {
            ':seq': entry.seq,
            ':hash': entry.hash,
            ':type': 'decision-head',
            ...(head.seq === 0 ? {} : { ':prev': head.seq }),
          },
          // The head as it is, so a writer that lost the turn need not read it again.
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
      moved,
    ),
    guarded(putNew({ ...Keys.decision(entry.seq), type: 'decision', seq: entry.seq, entry: entryJson }), () =>
      moved(undefined),
    ),
  ];
}

/** Entries after `after`, ascending, at most `limit`, and whether more follow (one Query). */
export async function listDecisions(
  after: number,
  limit: number,
): Promise<{ entries: DecisionEntry[]; more: boolean }> {
  const range = Keys.decisionsFrom(after + 1);
  const out = await ddb().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: { ':pk': range.pk, ':from': range.from, ':to': range.to },
      Limit: limit + 1,
    }),
  );
  const items = out.Items ?? [];
  return {
    entries: items.slice(0, limit).map((item) => JSON.parse(String(item.entry)) as DecisionEntry),
    more: items.length > limit,
  };
}
