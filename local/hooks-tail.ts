/**
 * The local stand-in for the webhook consumer (functions/jobs/webhooks.ts): a tail of the event
 * log (local/event-tail.ts) hands each persisted event to the same core code (core/webhooks.ts),
 * a few deliveries at a time so one slow hook does not hold up the next event. It reads only
 * while some hook is configured, and starts at the log's head (as the push tail does).
 */
import pLimit from 'p-limit';
import * as Webhooks from '../functions/core/webhooks.js';
import { getConfig } from '../functions/core/live-config.js';
import { currentSequence } from '../functions/store/events-repo.js';
import { startLogTail } from './event-tail.js';
import { asInvocation } from './invocations.js';

/** Events being delivered at once. */
const IN_FLIGHT = 8;

export function startLocalHooksTail(): { stop(): Promise<void> } {
  let stopped = false;
  const limit = pLimit(IN_FLIGHT);
  const inFlight = new Set<Promise<unknown>>();
  const tail = startLogTail({
    name: 'webhooks tail',
    start: async () => (await currentSequence()) + 1,
    enabled: async () => (await getConfig()).hooks.length > 0,
    consume: async (events) => {
      const config = await getConfig();
      for (const event of events) {
        if (Webhooks.hooksFor(event, config).length === 0) continue;
        const run = limit(() =>
          asInvocation(() => Webhooks.deliverEvent(event, config)).catch((error: unknown) => {
            if (!stopped) console.error('local webhooks:', error);
          }),
        );
        inFlight.add(run);
        void run.finally(() => inFlight.delete(run));
      }
    },
  });
  return {
    stop: async () => {
      stopped = true;
      await tail.stop();
      await Promise.all(inFlight);
    },
  };
}
