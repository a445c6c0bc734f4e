/**
 * What the claim routes answer: a leased batch (contract §2.5), its own module so that only they
 * bundle it (the settle routes answer 204).
 */
import * as z from '../../platform/zod.js';
import { MediaKind, id } from '../../model.js';

export const DispatchBatch = z
  .strictObject({
    batchId: id,
    chatId: id,
    kind: z.enum(['user_batch', 'request_batch']),
    agentIdHint: z.nullable(z.string()),
    compiledContent: z.string(),
    items: z.array(
      z.strictObject({
        inputId: id,
        sourceKind: z.enum(['user_message', 'request_resolved']),
        sourceId: id,
        senderId: z.string(),
        content: z.string(),
        traceKind: z.optional(z.string()),
        mediaIds: z.array(z.string()),
        attachmentNames: z.array(z.string()),
      }),
    ),
    attachments: z.array(
      z.strictObject({
        mediaId: id,
        fileName: z.string(),
        kind: MediaKind,
        sourceInputId: id,
        sourceIndex: z.int().check(z.nonnegative()),
      }),
    ),
  })
  .check(z.meta({ id: 'DispatchBatch', description: 'A claimed dispatch batch (contract §2.5).' }));
