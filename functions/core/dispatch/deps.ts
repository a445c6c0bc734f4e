/**
 * What dispatch takes from outside, so tests can stand in for it: the clock, id generation and
 * sleep (`DispatchDeps`), and the instance configuration's dispatch settings.
 */
import { newId } from '../../platform/ids.js';
import type { InstanceConfig } from '../../platform/instance-config.js';
import { sleep } from '../../platform/retry.js';

export interface DispatchDeps {
  clock: () => Date;
  newId: () => string;
  sleep: (ms: number) => Promise<void>;
}
export const defaultDeps: DispatchDeps = { clock: () => new Date(), newId, sleep };

export const dispatchConfig = (config: InstanceConfig) => config.server.dispatch;
