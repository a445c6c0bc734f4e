/**
 * The local stand-in for the auto-rename stream consumer (functions/jobs/auto-rename.ts): a tail
 * of the event log (local/event-tail.ts) hands each event to the same core code
 * (core/auto-rename.ts), which ignores every event but a finalized agent message. It starts at
 * the log's head: messages finalized while the runtime was down trigger nothing. While
 * auto-rename is off it reads nothing (only the log's head, once a second).
 */
import pLimit from 'p-limit';
import * as AutoRename from '../functions/core/auto-rename.js';
import { getConfig } from '../functions/core/live-config.js';
import { currentSequence } from '../functions/store/events-repo.js';
import { startLogTail } from './event-tail.js';
import { asInvocation } from './invocations.js';

/** Renames running at once (one slow provider does not hold up the next chat). */
const IN_FLIGHT = 4;

export function startLocalRenameTail(): { stop(): Promise<void> } {
  let stopped = false;
  const limit = pLimit(IN_FLIGHT);
  const inFlight = new Set<Promise<unknown>>();
  const tail = startLogTail({
    name: 'auto-rename tail',
    start: async () => (await currentSequence()) + 1,
    enabled: async () => (await getConfig()).autoRename?.enabled === true,
    consume: async (events) => {
      for (const event of events) {
        if (AutoRename.finalizedAgentMessageChat(event) === undefined) continue;
        const run = limit(() =>
          asInvocation(async () => AutoRename.renameForEvent(event, await getConfig())).catch((error: unknown) => {
            if (!stopped) console.error('local auto-rename:', error);
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
