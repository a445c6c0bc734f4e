/** The local stand-in for the tag catalog sweeper's schedule: the same handler, on an interval. */
import { handler as sweepTags } from '../functions/jobs/tag-sweep.js';
import { asInvocation } from './invocations.js';

/** The stack runs it every minute. */
const PERIOD_MS = 60_000;

export function startLocalTagSweep(): { stop(): void } {
  let stopped = false;
  const timer = setInterval(() => {
    asInvocation(() => sweepTags()).catch((error: unknown) => {
      if (!stopped) console.error('local tag sweeper:', error);
    });
  }, PERIOD_MS);
  timer.unref();
  return {
    stop: () => {
      stopped = true;
      clearInterval(timer);
    },
  };
}
