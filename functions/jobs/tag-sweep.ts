/**
 * The tag catalog sweeper (contract §2.7): a scheduled run, every minute in AWS (and on an
 * interval in the local runtime), that applies catalog parts a chat write left behind (its
 * function crashed after the commit, or its applies kept failing), so every usage count ends
 * exact. It reads only the sparse gsi3 marks of parts older than Tags.SWEEP_AFTER_MS, so an
 * idle instance costs one Query per run.
 */
import * as Tags from '../core/tags.js';
import { logger } from '../platform/logger.js';

export async function handler(): Promise<{ applied: number }> {
  const applied = await Tags.sweepCatalogParts();
  if (applied > 0) logger.warn('tag sweep applied stranded catalog parts', { parts: applied });
  return { applied };
}
