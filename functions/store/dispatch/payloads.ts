/**
 * A batch's frozen payload (contract §4.4.8): its items and attachments, stored in parts
 * (BATCH#<id>/PART#n, each under DynamoDB's item limit) beside the small batch header, written
 * by the seal (seal.ts) and read back by a claim.
 */
import { queryAll } from '../db.js';
import { Keys } from '../keys.js';
import type { MediaKind } from '../../model.js';

export interface BatchItem {
  inputId: string;
  sourceKind: 'user_message' | 'request_resolved';
  sourceId: string;
  senderId: string;
  content: string;
  traceKind?: string;
  mediaIds: string[];
  attachmentNames: string[];
}

export interface BatchAttachment {
  mediaId: string;
  fileName: string;
  kind: MediaKind;
  sourceInputId: string;
  sourceIndex: number;
}

/** A batch's frozen payload (§4.4.8), stored in parts beside its header. */
export interface BatchPayload {
  items: BatchItem[];
  attachments: BatchAttachment[];
}

/** A batch's frozen payload, its parts joined in order. */
export async function getPayload(batchId: string): Promise<BatchPayload> {
  const { pk, skPrefix } = Keys.batchPartsOf(batchId);
  const parts = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix },
    ConsistentRead: true,
  });
  return {
    items: parts.flatMap((p) => (p.items ?? []) as BatchItem[]),
    attachments: parts.flatMap((p) => (p.attachments ?? []) as BatchAttachment[]),
  };
}
