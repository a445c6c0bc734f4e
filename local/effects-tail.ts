/**
 * The events' side effects, run locally: web push (§7.3), outbound webhooks (§6.6) and auto-rename
 * (§10) come from one stream consumer in AWS, functions/jobs/event-effects.ts, and a tail of the
 * event log feeds that same handler here with the records its mapping lets through
 * (lib/stream-mappings.ts: every new persisted event, batches of up to 10, a record the handler
 * reports as failed retried from there; local/stream-tail.ts). It starts at the log's head, as
 * the mapping's LATEST does.
 *
 * While push, hooks and auto-rename are all off it reads nothing (the handler would do nothing
 * with what it read), keeping the log's head in view so it resumes from about where one was
 * turned on. The configuration is the handlers' own, read through its short cache.
 */
import { handler } from '../functions/jobs/event-effects.js';
import { getConfig } from '../functions/core/instance-config.js';
import { tableStreamMappings } from '../lib/stream-mappings.js';
import { startStreamTail } from './stream-tail.js';

export const startLocalEffectsTail = (): { stop(): Promise<void> } =>
  startStreamTail({
    mapping: tableStreamMappings.eventEffects,
    handler,
    enabled: async () => {
      const config = await getConfig();
      return config.push.enabled || config.hooks.length > 0 || config.autoRename?.enabled === true;
    },
  });
