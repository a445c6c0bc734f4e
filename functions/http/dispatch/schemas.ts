/** Shared pieces of the dispatch route schemas (contract §5.11). */
import { z } from 'zod';

export const workerId = z.string({ error: 'workerId is required.' }).min(1, 'workerId is required.');
export const nonNegativeInt = z.number().int().min(0);
export const batchPath = z.object({ batchId: z.string() });
