/**
 * The local stand-in for web push in the events' side-effects consumer
 * (functions/jobs/event-effects.ts): a tail of the event log (local/event-tail.ts) hands each
 * event to the same core code (core/push.ts). While push is off it reads nothing.
 */
import * as Push from '../functions/core/push.js';
import { getConfig } from '../functions/core/instance-config.js';
import { startEffectTail } from './event-tail.js';

export const startLocalPushTail = (): { stop(): Promise<void> } =>
  startEffectTail({
    name: 'push notifier',
    enabled: async () => (await getConfig()).push.enabled,
    wants: () => true,
    handle: async (event) => Push.notifyEvent(event, await getConfig()),
    inFlight: 8,
  });
