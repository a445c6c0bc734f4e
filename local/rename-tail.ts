/**
 * The local stand-in for auto-rename in the events' side-effects consumer
 * (functions/jobs/event-effects.ts): a tail of the event log (local/event-tail.ts) hands each
 * finalized agent message to the same core code (core/auto-rename.ts). While auto-rename is off
 * it reads nothing.
 */
import * as AutoRename from '../functions/core/auto-rename.js';
import { getConfig } from '../functions/core/instance-config.js';
import { startEffectTail } from './event-tail.js';

export const startLocalRenameTail = (): { stop(): Promise<void> } =>
  startEffectTail({
    name: 'auto-rename',
    enabled: async () => (await getConfig()).autoRename?.enabled === true,
    wants: (event) => AutoRename.finalizedAgentMessageChat(event) !== undefined,
    handle: async (event) => AutoRename.renameForEvent(event, await getConfig()),
    // One slow provider does not hold up the next chat.
    inFlight: 4,
  });
