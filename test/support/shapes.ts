/**
 * What the tests expect of every resource on the wire (contract §2): each resource's exact
 * keys, taken from the lists the service builds its responses with (functions/model.ts,
 * functions/store/requests-repo.ts) and sorted for comparing with `Object.keys(x).sort()`, and
 * the id and timestamp formats.
 */
import { expect } from '@jest/globals';
import { CHAT_FIELDS, MESSAGE_FIELDS } from '../../functions/model.js';
import type { Chat, Message } from '../../functions/model.js';
import { REQUEST_FIELDS } from '../../functions/model.js';
import type { RequestRecord } from '../../functions/model.js';

/**
 * Compiles only when `List` names every key of `T` (the lists already name nothing else), so a
 * field left out of a list fails the typecheck rather than passing with the service.
 */
type Complete<T, List extends readonly string[]> = [Exclude<keyof T, List[number]>] extends [never] ? true : false;
const complete: [
  Complete<Chat, typeof CHAT_FIELDS>,
  Complete<Message, typeof MESSAGE_FIELDS>,
  Complete<RequestRecord, typeof REQUEST_FIELDS>,
] = [true, true, true];
void complete;

/** A chat's keys (§2.1), sorted. */
export const CHAT_KEYS = [...CHAT_FIELDS].sort();
/** A message's keys (§2.2), sorted. */
export const MESSAGE_KEYS = [...MESSAGE_FIELDS].sort();
/** An interactive request's keys (§2.3), sorted. */
export const REQUEST_KEYS = [...REQUEST_FIELDS].sort();

/** A timestamp as the service writes it. */
export const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
/** A generated id. */
export const ID = /^[A-Za-z0-9_-]{21}$/;
/** A well-formed id no chat, message or request has. */
export const UNKNOWN_ID = 'ZZZZZZZZZZZZZZZZZZZZZ';

/** The one sleep (functions/platform/retry.ts), here for the tests that import it from this module. */
export { sleep } from '../../functions/platform/retry.js';

/** The error of a chat id that names no chat (404). */
export const chatNotFound = (chatId: string) => ({
  code: 'NOT_FOUND',
  message: 'Chat not found.',
  details: { chatId },
});

/** Expects a 201 whose body has exactly `keys` (sorted) and a generated id; returns the body. */
export function createdWith(res: { status: number; body: any }, keys: readonly string[]): any {
  expect(res.status).toBe(201);
  expect(Object.keys(res.body).sort()).toEqual(keys);
  expect(res.body.id).toMatch(ID);
  return res.body;
}
