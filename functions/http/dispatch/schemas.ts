/** Shared pieces of the dispatch route schemas (contract §5.11). */
import * as z from '../../platform/zod.js';
import { MediaKind, id } from '../../model.js';

/** At most 1,000 characters: it is stored on the batch and compared in its lease conditions. */
export const workerId = z
  .string({ error: 'workerId is required.' })
  .check(z.minLength(1, 'workerId is required.'), z.maxLength(1000, 'workerId must be at most 1000 characters.'));
export const nonNegativeInt = z.number().check(z.int(), z.gte(0));
export const batchPath = z.object({ batchId: z.string() });

/** What the claim routes answer: a leased batch (contract §2.5). */
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
