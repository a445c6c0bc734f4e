/**
 * Idempotency-Key on POST and PATCH (contract §1.10), after validation, before the handler.
 *
 * Hand-written rather than Powertools Idempotency: the contract fingerprints method + path +
 * the validated body with keys sorted, stores only 2xx responses, makes a concurrent duplicate
 * wait (re-checking every 25 ms for up to 2 s) before answering 409, and has exact error
 * messages; Powertools hashes the raw payload and fails an in-progress duplicate at once.
 */
import { createHash, randomUUID } from 'node:crypto';
import { ConflictError, FieldRuleError } from '../errors.js';
import { logger } from '../platform/logger.js';
import { sleep } from '../platform/retry.js';
import * as Records from '../store/idempotency-repo.js';
import type { IdempotencyRecord } from '../store/idempotency-repo.js';
import type { HttpMiddleware, HttpRequest, HttpResult } from './types.js';
import { header, jsonResult, stateOf } from './types.js';

const FIELD = 'Idempotency-Key';
const MAX_KEY_LENGTH = 255;
const WAIT_MS = 2000;
const RECHECK_MS = 25;

/** JSON with object keys sorted recursively and array order kept. */
export function canonicalJson(value: unknown): string {
  // An uploaded file's bytes (InputSchemas.readBody): by their digest (§1.10).
  if (value instanceof Uint8Array) return JSON.stringify(`sha256:${createHash('sha256').update(value).digest('hex')}`);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

export function fingerprintOf(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method}\n${path}\n${canonicalJson(body ?? {})}`)
    .digest('hex');
}

/** The reservation this invocation holds. */
const held = (request: HttpRequest) => stateOf(request).held;

function replayOf(record: IdempotencyRecord): HttpResult {
  const status = record.statusCode ?? 200;
  return status === 204 || !record.body ? jsonResult(status, undefined) : jsonResult(status, JSON.parse(record.body));
}

export function idempotency(): HttpMiddleware {
  return {
    before: async (request) => {
      const raw = header(request.event, 'idempotency-key');
      if (raw === undefined) return;
      const key = raw.trim();
      if (key === '') throw new FieldRuleError(FIELD, 'Idempotency-Key cannot be empty.');
      if (key.length > MAX_KEY_LENGTH) {
        throw new FieldRuleError(FIELD, `Idempotency-Key must be at most ${MAX_KEY_LENGTH} characters.`);
      }
      const state = stateOf(request);
      const keyHash = createHash('sha256').update(key).digest('hex');
      const fingerprint = fingerprintOf(
        request.event.requestContext.http.method,
        request.event.rawPath,
        state.input.body,
      );
      const conflict = (message: string) => new ConflictError(message, { field: FIELD, key });
      const lockMs = Math.max(5000, request.context.getRemainingTimeInMillis?.() ?? 30_000);

      const owner = randomUUID();
      const deadline = Date.now() + WAIT_MS;
      for (;;) {
        const now = Date.now();
        const outcome = await Records.reserve(keyHash, fingerprint, owner, now, lockMs);
        if (outcome.reserved) {
          // The handler may pass it to its service, whose transaction stores the reply with its
          // effect (http() `keyed`, Records.completionInTransaction).
          state.held = {
            key,
            keyHash,
            fingerprint,
            owner,
            ttlSeconds: state.config.server.idempotencyTtlSeconds,
          };
          return;
        }
        let record: IdempotencyRecord | undefined = outcome.existing;
        // Wait while the first request with this key is still running.
        while (record && Records.isLive(record, Date.now())) {
          if (record.fingerprint !== fingerprint) {
            throw conflict('Idempotency-Key already used with a different request payload.');
          }
          if (record.status === 'COMPLETED') {
            state.replay = replayOf(record);
            return;
          }
          if (Date.now() >= deadline) throw conflict('Idempotency request is already in progress. Retry shortly.');
          await sleep(RECHECK_MS);
          record = await Records.read(keyHash);
        }
        // Released or lapsed meanwhile: try to take the key ourselves.
        if (Date.now() >= deadline) throw conflict('Idempotency request is already in progress. Retry shortly.');
      }
    },
    after: async (request) => {
      const mine = held(request);
      const response = request.response;
      if (!mine || !response) return;
      const ok = response.statusCode >= 200 && response.statusCode < 300;
      // An answer that changed nothing (an empty claim) is not cached, so a retry can claim (§14 item 5).
      const state = stateOf(request);
      const stored = { statusCode: response.statusCode, body: response.body };
      // Already stored by the business transaction, with the effect: nothing left to write.
      if (mine.committed && mine.committed.statusCode === stored.statusCode && mine.committed.body === stored.body) {
        return;
      }
      if (!mine.committed && (!ok || state.forget || response.body.length > Records.MAX_STORED_BODY || state.replay)) {
        await Records.release(mine);
        return;
      }
      // A committed effect keeps its stored reply even when the handler went on to fail.
      if (!ok) return;
      try {
        await Records.complete(mine, stored, Date.now(), mine.ttlSeconds);
      } catch (error) {
        // The effect has happened: answer it. Routes that store their reply in the business
        // transaction are safe; on others a retry with this key may execute again.
        logger.error('idempotency record could not be stored', { error });
      }
    },
    onError: async (request) => {
      const mine = held(request);
      if (!mine) return;
      if (mine.committed) return;
      try {
        await Records.release(mine);
      } catch (error) {
        logger.warn('idempotency release failed; the key lapses with its lock', { error });
      }
    },
  };
}
