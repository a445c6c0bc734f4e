/**
 * The single table's key attributes and indexes, shared by the CDK stack and the local
 * runtime so both create the very same table. Key *values* are spelled only in
 * functions/store/keys.ts.
 */
export interface IndexSchema {
  indexName: string;
  partitionKey: string;
  sortKey: string;
  /** Attributes projected besides the keys; undefined means ALL. */
  include?: readonly string[];
}

export const tableSchema = {
  partitionKey: 'pk',
  sortKey: 'sk',
  /** Epoch seconds; DynamoDB deletes expired items (idempotency, rate limits, events). */
  ttlAttribute: 'ttl',
  /**
   * What the table's stream records carry: both images (the stack's stream; the local runtime
   * builds its consumers' records with this view, local/stream-records.ts).
   */
  streamViewType: 'NEW_AND_OLD_IMAGES',
  indexes: [
    /** All chats in list order (pinned, last activity, id). */
    { indexName: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
    /** Chats of one archived state, same order: serves `archived=true|false`. */
    { indexName: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi1sk' },
    /**
     * Sparse "needs attention" index: only chats that may have unread messages or pending
     * requests carry gsi3pk, so the summaries read those few small projections, not every chat.
     */
    {
      indexName: 'gsi3',
      partitionKey: 'gsi3pk',
      sortKey: 'gsi3sk',
      include: ['unread_count', 'pending_requests_count', 'agent_ids', 'is_archived'],
    },
  ],
} as const satisfies {
  partitionKey: string;
  sortKey: string;
  ttlAttribute: string;
  streamViewType: 'KEYS_ONLY' | 'NEW_IMAGE' | 'OLD_IMAGE' | 'NEW_AND_OLD_IMAGES';
  indexes: readonly IndexSchema[];
};
