/**
 * Outbound webhooks (contract §6.6): every persisted event whose type a configured hook lists is
 * POSTed to it as `{ id, type, timestamp, payload }`, the payload enriched for message.created,
 * request.resolved and request.cancelled, signed with HMAC-SHA256 over the exact raw body when
 * the hook has a signing secret. Deliveries run off the request path, from the table's stream by
 * functions/jobs/event-effects.ts (locally the same handler, fed by a tail of the event log:
 * local/effects-tail.ts).
 *
 * Each hook is delivered independently: up to 1 + maxRetries attempts, each with its own
 * timeout; 2xx ends it, 4xx (any non-2xx below 500) ends it as a permanent failure, 5xx,
 * network errors and timeouts are retried after min(1000 × 2^(k−1) + random(0..500), 30000) ms.
 * A claim written before the first attempt keeps a redelivered event from being sent twice, and
 * every attempt is recorded with the event (store/hooks-repo.ts).
 */
import { createHash, createHmac } from 'node:crypto';
import { EVENTS, isEvent } from '../model/events.js';
import type { HookPayloadOf } from '../model/events.js';
import { env } from '../platform/env.js';
import type { HookConfig, InstanceConfig } from '../platform/instance-config.js';
import { logger } from '../platform/logger.js';
import { retry } from '../platform/retry.js';
import type { RetryPolicy } from '../platform/retry.js';
import { getChat } from '../store/chats-repo.js';
import type { StoredEvent } from '../store/events-repo.js';
import { claimDelivery, recordAttempt } from '../store/hooks-repo.js';
import { getMessage, locate } from '../store/messages-repo.js';
import { getRequest, locate as locateRequest } from '../store/requests-repo.js';

const DEFAULT_TIMEOUT_MS = 5000;
const DEFAULT_MAX_RETRIES = 3;
const MAX_BACKOFF_MS = 30_000;
/** A response body is read (and dropped) up to this size, so the connection can be reused. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/** A stable id for a hook: its URL and event list (a reordered configuration keeps its claims). */
export const hookIdOf = (hook: HookConfig): string =>
  createHash('sha256')
    .update(JSON.stringify([hook.url, [...hook.events].sort()]))
    .digest('base64url')
    .slice(0, 16);

/** `X-OpenGram-Signature`: sha256=<lower-case hex HMAC-SHA256 of the raw body>. */
export const signatureOf = (secret: string, rawBody: string): string =>
  `sha256=${createHmac('sha256', secret).update(rawBody, 'utf8').digest('hex')}`;

/** The wait before retry number `k` (1-based); `baseMs` is 1000 outside tests. */
export function backoffMs(k: number, baseMs: number, random = Math.random): number {
  return Math.min(baseMs * 2 ** (k - 1) + Math.floor(random() * (baseMs / 2 + 1)), MAX_BACKOFF_MS);
}

/** The payload a hook receives: enriched from the current records where §6.6 says so, else the raw one. */
export async function hookPayload(event: StoredEvent): Promise<Record<string, unknown>> {
  if (isEvent(event, EVENTS.messageCreated)) {
    const location = await locate(event.payload.messageId);
    const message = location && (await getMessage(location));
    const chat = message && (await getChat(message.chat_id));
    if (!message || !chat) return event.payload;
    const enriched: HookPayloadOf<'messageCreated'> = {
      chatId: chat.id,
      agentIds: chat.agent_ids,
      messageId: message.id,
      senderId: message.sender_id,
      role: message.role,
      content: message.content_final ?? message.content_partial,
      modelId: message.model_id,
      pendingRequestsCount: chat.pending_requests_count,
      trace: message.trace,
    };
    return enriched;
  }
  if (isEvent(event, EVENTS.requestResolved, EVENTS.requestCancelled)) {
    const location = await locateRequest(event.payload.requestId);
    const request = location && (await getRequest(location));
    if (!request || request.status === 'pending') return event.payload;
    const enriched: HookPayloadOf<'requestResolved' | 'requestCancelled'> = {
      chatId: request.chat_id,
      requestId: request.id,
      type: request.type,
      status: request.status,
      resolutionPayload: request.resolution_payload,
      trace: request.trace,
      // §5.5.6: an expiry says so, so that a hook can route it (absent otherwise, as §6.6 has it).
      ...(event.payload.reason ? { reason: event.payload.reason } : {}),
    };
    return enriched;
  }
  return event.payload;
}

type Outcome = { status: number | null; error: string | null };

const succeeded = ({ status }: Outcome): boolean => status !== null && status >= 200 && status < 300;

/** Only 5xx, network errors and timeouts are worth another attempt (4xx is a permanent failure). */
const worthRetrying = (outcome: Outcome): boolean =>
  !succeeded(outcome) && (outcome.status === null || outcome.status >= 500);

/**
 * A hook gets 1 + maxRetries attempts (3 retries unless configured), paced by `backoffMs` from
 * HOOK_RETRY_BASE_MS (1 s outside tests, capped at 30 s): the receiver's outage may last a while,
 * and the stream record waits for it. Built per delivery: the hook and the base decide it.
 */
const hookRetries = (hook: HookConfig): RetryPolicy<Outcome> => ({
  attempts: 1 + (hook.maxRetries ?? DEFAULT_MAX_RETRIES),
  backoff: (k) => backoffMs(k, env().HOOK_RETRY_BASE_MS),
  retryResult: worthRetrying,
});

async function attempt(hook: HookConfig, headers: Record<string, string>, body: string): Promise<Outcome> {
  try {
    const res = await fetch(hook.url, {
      method: 'POST',
      headers,
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(hook.timeoutMs ?? DEFAULT_TIMEOUT_MS),
    });
    // Read a little of the answer and drop the rest; the status is all that counts.
    const reader = res.body?.getReader();
    for (let read = 0; reader && read < MAX_RESPONSE_BYTES;) {
      const chunk = await reader.read();
      if (chunk.done) break;
      read += chunk.value.byteLength;
    }
    await reader?.cancel().catch(() => undefined);
    return { status: res.status, error: null };
  } catch (error) {
    const e = error as Error;
    return {
      status: null,
      error: e.name === 'TimeoutError' ? `timed out after ${hook.timeoutMs ?? 5000} ms` : e.message,
    };
  }
}

/** Delivers one event to one hook, with its retries; records every attempt. */
async function deliver(hook: HookConfig, event: StoredEvent, body: string): Promise<void> {
  const hookId = hookIdOf(hook);
  if (!(await claimDelivery(event.id, hookId, Date.now()))) return;
  const headers: Record<string, string> = {
    ...hook.headers,
    'content-type': 'application/json',
    ...(hook.signingSecret ? { 'x-opengram-signature': signatureOf(hook.signingSecret, body) } : {}),
  };
  const policy = hookRetries(hook);
  const outcome = await retry(policy, async (n) => {
    const outcome = await attempt(hook, headers, body);
    await recordAttempt({
      eventId: event.id,
      hookId,
      url: hook.url,
      attempt: n,
      status: outcome.status,
      success: succeeded(outcome),
      error: outcome.error ?? (succeeded(outcome) ? null : `HTTP ${outcome.status}`),
      at: new Date().toISOString(),
    });
    return outcome;
  });
  if (worthRetrying(outcome)) {
    logger.warn('webhook delivery failed', {
      eventId: event.id,
      eventType: event.type,
      hookId,
      attempts: policy.attempts,
    });
  }
}

/** The hooks that want `event`. */
export const hooksFor = (event: StoredEvent, config: InstanceConfig): HookConfig[] =>
  config.hooks.filter((h) => h.events.includes(event.type));

/**
 * Delivers `event` to every hook that lists its type, each independently, and resolves when all
 * are done. A storage failure (claim, record) is thrown after the other hooks finish, so the
 * stream retries the record; the claims keep the hooks already served from a second delivery.
 */
export async function deliverEvent(event: StoredEvent, config: InstanceConfig): Promise<void> {
  const hooks = hooksFor(event, config);
  if (hooks.length === 0) return;
  const payload = await hookPayload(event);
  const body = JSON.stringify({ id: event.id, type: event.type, timestamp: event.timestamp, payload });
  const results = await Promise.allSettled(hooks.map((hook) => deliver(hook, event, body)));
  const broken = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (broken) throw broken.reason;
}
