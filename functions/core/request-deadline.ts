/**
 * A request's deadline (contract §5.5.6): the `deadline` body field of create and PATCH checked
 * and normalized to the stored shape, and the times its timers fire. Pure functions: no storage.
 *
 * Every error is a 400 VALIDATION_ERROR naming the deadline field; a default's own errors are
 * the resolve endpoint's (§5.5.4), their field prefixed with `deadline.default.`.
 */
import { FieldRuleError, ValidationError } from '../errors.js';
import { reminderAtMs } from '../model.js';
import type { RequestDeadline, RequestRecord } from '../model.js';
import type { RequestTimer } from '../platform/request-timer.js';
import { isObject, normalizeResolution } from './request-config.js';
import type { RequestConfig, RequestType } from './request-config.js';

/** The nearest and farthest a deadline may be set (§5.5.6). */
export const MIN_DEADLINE_SECONDS = 10;
export const MAX_DEADLINE_SECONDS = 30 * 24 * 3600;
export const MAX_REMINDERS = 3;

/** An ISO 8601 timestamp with a time zone offset (or Z); seconds and fractions optional. */
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);

/**
 * The deadline a create or PATCH body asks for: `undefined` when the body has none (PATCH leaves
 * the stored one), `null` to have none, else the normalized deadline. `config` is the one the
 * request will have (a PATCH's new config when it carries one).
 */
export function parseDeadline(
  input: unknown,
  type: RequestType,
  config: RequestConfig,
  nowMs: number,
): RequestDeadline | null | undefined {
  if (input === undefined) return undefined;
  if (input === null) return null;
  if (!isObject(input)) throw new FieldRuleError('deadline', 'deadline must be a JSON object or null.');
  const atMs = deadlineTime(input, nowMs);
  const onExpiry = input.onExpiry ?? 'cancel';
  if (onExpiry !== 'cancel' && onExpiry !== 'resolve') {
    throw new FieldRuleError('deadline.onExpiry', 'deadline.onExpiry must be one of cancel, resolve.');
  }
  const defaultPayload = onExpiry === 'resolve' ? checkDefault(input.default, type, config) : noDefault(input.default);
  const reminders = checkReminders(input.remindBeforeSeconds, Math.floor((atMs - nowMs) / 1000));
  return {
    at: new Date(atMs).toISOString(),
    on_expiry: onExpiry,
    default_payload: defaultPayload,
    remind_before_seconds: reminders,
  };
}

function deadlineTime(input: Record<string, unknown>, nowMs: number): number {
  const hasAt = input.at !== undefined;
  const hasIn = input.inSeconds !== undefined;
  if (hasAt === hasIn) throw new FieldRuleError('deadline', 'deadline requires exactly one of at and inSeconds.');
  if (hasIn) {
    const seconds = input.inSeconds;
    if (!isInt(seconds) || seconds < MIN_DEADLINE_SECONDS || seconds > MAX_DEADLINE_SECONDS) {
      throw new FieldRuleError(
        'deadline.inSeconds',
        `deadline.inSeconds must be an integer from ${MIN_DEADLINE_SECONDS} to ${MAX_DEADLINE_SECONDS}.`,
      );
    }
    return nowMs + seconds * 1000;
  }
  const at = input.at;
  const atMs = typeof at === 'string' && ISO_WITH_OFFSET.test(at) ? Date.parse(at) : NaN;
  if (Number.isNaN(atMs)) {
    throw new FieldRuleError('deadline.at', 'deadline.at must be an ISO 8601 timestamp with a time zone offset.');
  }
  const ahead = atMs - nowMs;
  if (ahead < MIN_DEADLINE_SECONDS * 1000 || ahead > MAX_DEADLINE_SECONDS * 1000) {
    throw new FieldRuleError('deadline.at', 'deadline.at must be between 10 seconds and 30 days from now.');
  }
  return atMs;
}

function checkDefault(value: unknown, type: RequestType, config: RequestConfig): Record<string, unknown> {
  if (value === undefined || value === null) {
    throw new FieldRuleError('deadline.default', 'deadline.default is required when deadline.onExpiry is resolve.');
  }
  if (!isObject(value)) throw new FieldRuleError('deadline.default', 'deadline.default must be a JSON object.');
  return defaultPayloadFor(type, config, value);
}

/** A resolution body checked as the resolve endpoint checks it, its errors' fields under `deadline.default.`. */
function defaultPayloadFor(
  type: RequestType,
  config: RequestConfig,
  value: Record<string, unknown>,
): Record<string, unknown> {
  try {
    return normalizeResolution(type, config, value) as Record<string, unknown>;
  } catch (error) {
    if (error instanceof ValidationError && error.details && typeof error.details.field === 'string') {
      const { field, ...extra } = error.details;
      throw new FieldRuleError(`deadline.default.${field}`, error.message, extra);
    }
    throw error;
  }
}

function noDefault(value: unknown): null {
  if (value !== undefined && value !== null) {
    throw new FieldRuleError('deadline.default', 'deadline.default is only allowed when deadline.onExpiry is resolve.');
  }
  return null;
}

function checkReminders(value: unknown, secondsLeft: number): number[] {
  if (value === undefined || value === null) return [];
  const field = 'deadline.remindBeforeSeconds';
  if (!Array.isArray(value) || value.length > MAX_REMINDERS) {
    throw new FieldRuleError(
      field,
      `deadline.remindBeforeSeconds must be an array of at most ${MAX_REMINDERS} integers.`,
    );
  }
  for (const s of value) {
    if (!isInt(s) || s < 1 || s >= secondsLeft) {
      throw new FieldRuleError(
        field,
        'deadline.remindBeforeSeconds entries must be integers of at least 1 and less than the time left to the deadline.',
      );
    }
  }
  if (new Set(value).size !== value.length) {
    throw new FieldRuleError(field, 'deadline.remindBeforeSeconds entries must be distinct.');
  }
  return [...(value as number[])].sort((a, b) => b - a);
}

/**
 * A stored resolve default checked again against a PATCH's new config (a config change must not
 * leave a default the expiry could not apply); the errors name `deadline.default.…`.
 */
export function recheckDefault(deadline: RequestDeadline | null, type: RequestType, config: RequestConfig): void {
  if (deadline?.on_expiry === 'resolve' && deadline.default_payload) {
    defaultPayloadFor(type, config, deadline.default_payload);
  }
}

/** Every timer of a pending request's deadline, soonest first (none without a deadline). */
export function timersOf(request: Pick<RequestRecord, 'id' | 'status' | 'deadline'>): RequestTimer[] {
  const deadline = request.deadline;
  if (!deadline || request.status !== 'pending') return [];
  const reminders = deadline.remind_before_seconds.map((before): RequestTimer => ({
    requestId: request.id,
    kind: 'remind',
    at: deadline.at,
    before,
    fireAtMs: reminderAtMs(deadline, before),
  }));
  return [...reminders, { requestId: request.id, kind: 'expire', at: deadline.at, fireAtMs: Date.parse(deadline.at) }];
}

/** "5 minutes left": how a reminder's push says the time left. */
export function timeLeftText(seconds: number): string {
  const unit = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;
  if (seconds < 120) return `${unit(seconds, 'second')} left to answer.`;
  if (seconds < 2 * 3600) return `${unit(Math.round(seconds / 60), 'minute')} left to answer.`;
  if (seconds < 2 * 86400) return `${unit(Math.round(seconds / 3600), 'hour')} left to answer.`;
  return `${unit(Math.round(seconds / 86400), 'day')} left to answer.`;
}
