/**
 * What a service takes from outside rather than reaching for it: the time and new ids, so a
 * test can fix both. Every service that writes takes `deps: Deps = defaultDeps` as its last
 * argument (a service that waits adds its own `sleep`, core/dispatch/deps.ts).
 */
import { newId } from '../platform/ids.js';

export interface Deps {
  clock: () => Date;
  newId: () => string;
}

export const defaultDeps: Deps = { clock: () => new Date(), newId };
