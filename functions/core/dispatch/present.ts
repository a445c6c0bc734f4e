/**
 * A leased batch as workers receive it (contract §2.5): its chat's agent hint and its frozen
 * payload, read back from the table. A claim starts reading it as soon as the lease is written.
 */
import * as Chats from '../../store/chats-repo.js';
import type { BatchRecord } from '../../store/dispatch/batches.js';
import * as Payloads from '../../store/dispatch/payloads.js';
import type { BatchAttachment, BatchItem } from '../../store/dispatch/payloads.js';
import { compiledContent } from './payload.js';

/** A batch as workers receive it (§2.5, camelCase). */
export interface ClaimedBatch {
  batchId: string;
  chatId: string;
  kind: BatchRecord['kind'];
  agentIdHint: string | null;
  compiledContent: string;
  items: BatchItem[];
  attachments: BatchAttachment[];
}

/** Presentations read while leasing (tryLease), by the leased batch record. */
const presentations = new WeakMap<BatchRecord, Promise<ClaimedBatch>>();

async function present(batch: BatchRecord): Promise<ClaimedBatch> {
  const [chat, payload] = await Promise.all([Chats.getChat(batch.chat_id), Payloads.getPayload(batch.id)]);
  const hint = chat?.agent_ids.find((a) => a !== '') ?? null;
  return {
    batchId: batch.id,
    chatId: batch.chat_id,
    kind: batch.kind,
    agentIdHint: hint,
    // Rebuilt from the frozen items (deterministic), so a batch stores its text once.
    compiledContent: compiledContent(payload.items),
    items: payload.items,
    attachments: payload.attachments,
  };
}

/**
 * Starts reading a batch's presentation as soon as it is leased (tryLease), side by side with
 * what the lease does next: one round trip less. Unused if the claim gives the batch back.
 */
export function presentEarly(batch: BatchRecord): void {
  const shown = present(batch);
  shown.catch(() => undefined); // awaited (and its failure handled) by the claim
  presentations.set(batch, shown);
}

/** A leased batch's presentation: the one started when it was leased, or a fresh read. */
export const presentation = (batch: BatchRecord): Promise<ClaimedBatch> => presentations.get(batch) ?? present(batch);
