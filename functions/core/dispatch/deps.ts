/**
 * What dispatch takes from outside, so tests can stand in for it: the clock, id generation and
 * sleep (`DispatchDeps`), and the instance configuration's dispatch settings.
 */
import type { InstanceConfig } from '../../platform/instance-config.js';
import { sleep } from '../../platform/retry.js';

import { defaultDeps as serviceDeps } from '../deps.js';
import type { Deps } from '../deps.js';

export interface DispatchDeps extends Deps {
  sleep: (ms: number) => Promise<void>;
}
export const defaultDeps: DispatchDeps = { ...serviceDeps, sleep };

export const dispatchConfig = (config: InstanceConfig) => config.server.dispatch;
