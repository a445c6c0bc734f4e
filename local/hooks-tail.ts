/**
 * The local stand-in for webhooks in the events' side-effects consumer
 * (functions/jobs/event-effects.ts): a tail of the event log (local/event-tail.ts) hands each
 * persisted event a hook lists to the same core code (core/webhooks.ts). While no hook is
 * configured it reads nothing.
 */
import * as Webhooks from '../functions/core/webhooks.js';
import { getConfig } from '../functions/core/instance-config.js';
import type { StoredEvent } from '../functions/store/events-repo.js';
import { startEffectTail } from './event-tail.js';

export function startLocalHooksTail(): { stop(): Promise<void> } {
  let hooked = (_event: StoredEvent) => false;
  return startEffectTail({
    name: 'webhooks',
    enabled: async () => {
      const config = await getConfig();
      hooked = (event) => Webhooks.hooksFor(event, config).length > 0;
      return config.hooks.length > 0;
    },
    wants: (event) => hooked(event),
    handle: async (event) => Webhooks.deliverEvent(event, await getConfig()),
    inFlight: 8,
  });
}
