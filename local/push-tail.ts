/**
 * The local stand-in for the push notifier's stream consumer (functions/jobs/push-notify.ts):
 * a tail of the event log (local/event-tail.ts) hands each event to the same core code
 * (core/push.ts). It starts at the log's head: events written while the runtime was down
 * notify no one (in AWS the stream keeps them 24 hours). While push is off it reads nothing.
 */
import pLimit from 'p-limit';
import * as Push from '../functions/core/push.js';
import { getConfig } from '../functions/core/live-config.js';
import { currentSequence } from '../functions/store/events-repo.js';
import { startLogTail } from './event-tail.js';
import { asInvocation } from './invocations.js';

/** Notifications delivering at once (one slow push service does not hold up the next event). */
const IN_FLIGHT = 8;

export function startLocalPushTail(): { stop(): Promise<void> } {
  let stopped = false;
  const limit = pLimit(IN_FLIGHT);
  const inFlight = new Set<Promise<unknown>>();
  const tail = startLogTail({
    name: 'push tail',
    start: async () => (await currentSequence()) + 1,
    enabled: async () => (await getConfig()).push.enabled,
    consume: async (events) => {
      for (const event of events) {
        const run = limit(() =>
          asInvocation(async () => Push.notifyEvent(event, await getConfig())).catch((error: unknown) => {
            if (!stopped) console.error('local push notifier:', error);
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
