/** Shared pieces of the dispatch route schemas (contract §5.11). */
import * as z from '../../platform/zod.js';

/** At most 1,000 characters: it is stored on the batch and compared in its lease conditions. */
export const workerId = z
  .string({ error: 'workerId is required.' })
  .check(z.minLength(1, 'workerId is required.'), z.maxLength(1000, 'workerId must be at most 1000 characters.'));
export const nonNegativeInt = z.number().check(z.int(), z.gte(0));
export const batchPath = z.object({ batchId: z.string() });
