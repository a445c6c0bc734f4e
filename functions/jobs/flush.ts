/**
 * The flush consumer (contract §4.4.3): the dispatch flush queue's event source. Each record
 * names a chat whose unsealed inputs may be ready; `Dispatch.flush` seals them, or schedules
 * the next look. Records that fail are reported back (ReportBatchItemFailures) so only they
 * are retried.
 */
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import * as Dispatch from '../core/dispatch.js';
import { getConfig } from '../core/live-config.js';
import { logger } from '../platform/logger.js';

export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  const config = await getConfig();
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  await Promise.all(
    event.Records.map(async (record) => {
      try {
        const { chatId } = JSON.parse(record.body) as { chatId?: unknown };
        if (typeof chatId !== 'string') return; // not ours: drop it
        await Dispatch.flush(config, chatId);
      } catch (error) {
        logger.error('flush failed', { messageId: record.messageId, error });
        failures.push({ itemIdentifier: record.messageId });
      }
    }),
  );
  return { batchItemFailures: failures };
}
