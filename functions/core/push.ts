/**
 * Web push (contract §5.10, §7): subscriptions, the test endpoint, and the notifier that turns
 * the event log's notifying events (§7.3) into pushes to every subscribed device. The notifier
 * runs off the request path, from the table's stream by functions/jobs/event-effects.ts (locally
 * the same handler, fed by a tail of the event log: local/effects-tail.ts), which hands it stored events.
 */
import pLimit from 'p-limit';
import { FieldRuleError, ValidationError } from '../errors.js';
import { EVENTS, isEvent } from '../model/events.js';
import type { InstanceConfig } from '../platform/instance-config.js';
import { newId } from '../platform/ids.js';
import { logger } from '../platform/logger.js';
import { env } from '../platform/env.js';
import { backoff, retry } from '../platform/retry.js';
import type { RetryPolicy } from '../platform/retry.js';
import { pushRequestFor, sendPushRequest } from '../platform/web-push.js';
import { getChat } from '../store/chats-repo.js';
import type { StoredEvent } from '../store/events-repo.js';
import { getMessage, locate } from '../store/messages-repo.js';
import { getRequest, locate as locateRequest } from '../store/requests-repo.js';
import { timeLeftText } from './request-deadline.js';
import * as PushRepo from '../store/push-repo.js';
import type { PushSubscription } from '../store/push-repo.js';
import { checkPushEndpoint, checkPushKeys } from './push-endpoint.js';
import { vapidKeys } from './push-keys.js';
import { buildPushPayload, messageBodySource, testPushInput } from './push-payload.js';
import type { PushData } from './push-payload.js';

/** Deliveries in flight at once for one notification (a user has a handful of devices; 50 is a lot). */
const PARALLEL_DELIVERIES = 16;
/** Attempts per device for a retryable failure (network error, timeout, 429, 5xx). */
const MAX_ATTEMPTS = 3;
/** Push service answers that mean the subscription is gone (§7.5). */
const GONE = new Set([401, 403, 404, 410]);

function assertEnabled(config: InstanceConfig): void {
  if (!config.push.enabled) throw new ValidationError('Push notifications are disabled in config.');
}

function endpointOf(body: Record<string, unknown>): string {
  const checked = checkPushEndpoint(body.endpoint);
  if (!checked.ok) throw new FieldRuleError(checked.field, checked.message);
  return checked.endpoint;
}

/** POST /push/subscribe: stores the device, or refreshes it keeping its id (§5.10.1). */
export async function subscribe(
  body: Record<string, unknown>,
  userAgent: string | undefined,
  config: InstanceConfig,
): Promise<{ id: string; endpoint: string }> {
  const endpoint = endpointOf(body);
  const keys = checkPushKeys(body.keys);
  if (!keys.ok) throw new FieldRuleError(keys.field, keys.message);
  assertEnabled(config);
  const stored = await PushRepo.upsertSubscription(
    {
      endpoint,
      keys_p256dh: keys.p256dh,
      keys_auth: keys.auth,
      user_agent: userAgent ?? null,
      created_at: new Date().toISOString(),
    },
    newId(),
  );
  return { id: stored.id, endpoint: stored.endpoint };
}

/** DELETE /push/subscribe (§5.10.2). */
export async function unsubscribe(
  body: Record<string, unknown>,
  config: InstanceConfig,
): Promise<{ ok: true; removed: boolean }> {
  const endpoint = endpointOf(body);
  assertEnabled(config);
  return { ok: true, removed: await PushRepo.deleteSubscription(endpoint) };
}

export interface DeliveryCounts {
  sent: number;
  failed: number;
  removed: number;
}

type Outcome = 'sent' | 'failed' | 'removed';

/** One send's answer: the push service's status, or why there was none (network error, timeout). */
interface Sent {
  status?: number;
  failure?: string;
}

/** Only a network error, a timeout, 429 or 5xx is worth another send. */
const worthRetrying = ({ status }: Sent): boolean => status === undefined || status === 429 || status >= 500;

/**
 * A push service that fails for a moment (network, timeout, 429, 5xx) gets MAX_ATTEMPTS sends,
 * PUSH_RETRY_BASE_MS (500 ms outside tests) doubling between them with jitter, so a struggling
 * service is not hit in lockstep. Built per delivery: the base is read from the environment.
 */
const pushRetries = (): RetryPolicy<Sent> => ({
  attempts: MAX_ATTEMPTS,
  backoff: backoff.exponential(env().PUSH_RETRY_BASE_MS),
  retryResult: worthRetrying,
});

/** One device: retried with backoff on retryable failures, removed when the service says it is gone. */
async function deliverOne(sub: PushSubscription, send: () => Promise<number>): Promise<Outcome> {
  let attempts = 0;
  const { status, failure } = await retry(pushRetries(), async (n): Promise<Sent> => {
    attempts = n;
    try {
      return { status: await send() };
    } catch (error) {
      return { failure: (error as Error).name === 'TimeoutError' ? 'timeout' : (error as Error).message };
    }
  });
  if (status !== undefined && status >= 200 && status < 300) return 'sent';
  if (status !== undefined && GONE.has(status)) {
    await PushRepo.deleteRefusedSubscription(sub);
    logger.info('push subscription removed', { subscriptionId: sub.id, status });
    return 'removed';
  }
  logger.warn('push delivery failed', { subscriptionId: sub.id, status, failure, attempts });
  return 'failed';
}

/** Sends one payload to every given device, a bounded number at once; one device never holds up another. */
async function deliver(
  payload: string,
  subscriptions: PushSubscription[],
  config: InstanceConfig,
): Promise<DeliveryCounts> {
  const counts: DeliveryCounts = { sent: 0, failed: 0, removed: 0 };
  if (subscriptions.length === 0) return counts;
  const keys = await vapidKeys(config);
  const limit = pLimit(PARALLEL_DELIVERIES);
  const outcomes = await Promise.all(
    subscriptions.map((sub) =>
      limit(async (): Promise<Outcome> => {
        let request;
        try {
          request = await pushRequestFor(sub, payload, keys, config.push.subject);
        } catch (error) {
          // Keys the encryption refuses (not a P-256 point, wrong auth length): nothing to retry.
          logger.warn('push delivery failed', { subscriptionId: sub.id, failure: (error as Error).message });
          return 'failed';
        }
        return deliverOne(sub, () => sendPushRequest(request));
      }),
    ),
  );
  for (const outcome of outcomes) {
    counts[outcome] += 1;
    if (outcome === 'removed') counts.failed += 1;
  }
  return counts;
}

/** POST /push/test: one notification to every device, waiting for every attempt (§5.10.3). */
export async function sendTest(
  body: Record<string, unknown>,
  config: InstanceConfig,
): Promise<{ ok: true } & DeliveryCounts> {
  assertEnabled(config);
  const input = testPushInput(body);
  const payload = buildPushPayload(input.title, input.body, input.data);
  if (payload === undefined) throw new Error('The test notification does not fit in a push payload.');
  const counts = await deliver(payload, await PushRepo.listSubscriptions(), config);
  return { ok: true, ...counts };
}

interface Notification {
  chatId: string;
  /** Whose name titles it: the message's sender, or for a request the chat's first agent. */
  agentId: () => Promise<string | undefined>;
  /** A title of its own (a reminder's: the request's title), instead of the agent's name. */
  title?: string;
  body: string;
  data: PushData;
}

const chatUrl = (chatId: string) => `/chats/${chatId}`;

/**
 * The notification an event calls for (§7.3): an agent message created complete, an agent stream
 * completed, a new request, a deadline's reminder (§5.5.6); undefined for every other event.
 */
async function notificationFor(event: StoredEvent): Promise<Notification | undefined> {
  if (isEvent(event, EVENTS.messageCreated)) {
    const { chatId, messageId, role, streamState, senderId, contentFinal } = event.payload;
    if (role !== 'agent' || streamState !== 'complete') return undefined;
    return {
      chatId,
      agentId: async () => senderId,
      body: messageBodySource(contentFinal, false),
      data: { chatId, messageId, type: 'message', url: chatUrl(chatId) },
    };
  }
  if (isEvent(event, EVENTS.messageStreamingComplete)) {
    const { chatId, messageId, role, streamState, finalText } = event.payload;
    if (role !== 'agent' || streamState !== 'complete') return undefined;
    return {
      chatId,
      agentId: async () => {
        const location = await locate(messageId);
        return location && (await getMessage(location))?.sender_id;
      },
      body: messageBodySource(finalText, true),
      data: { chatId, messageId, type: 'message', url: chatUrl(chatId) },
    };
  }
  if (isEvent(event, EVENTS.requestCreated)) {
    const { chatId, title } = event.payload;
    return {
      chatId,
      agentId: async () => (await getChat(chatId))?.agent_ids[0],
      body: title,
      data: { chatId, type: 'request', url: chatUrl(chatId) },
    };
  }
  if (isEvent(event, EVENTS.requestReminder)) {
    const { chatId, requestId, title, secondsLeft } = event.payload;
    return {
      chatId,
      agentId: async () => undefined,
      title,
      body: timeLeftText(secondsLeft),
      data: { chatId, type: 'request', url: chatUrl(chatId), requestId, actions: await answerActions(requestId) },
    };
  }
  return undefined;
}

/**
 * The notification actions that answer a request in one tap (§5.5.6): the options of a choice
 * request with at most two of them and one selection; none for any other request.
 */
async function answerActions(requestId: string): Promise<{ id: string; label: string }[] | undefined> {
  const loc = await locateRequest(requestId);
  const request = loc && (await getRequest(loc));
  if (!request || request.type !== 'choice' || request.status !== 'pending') return undefined;
  const config = request.config as { options?: { id: string; label: string }[]; maxSelections?: number };
  const options = config.options ?? [];
  if (options.length === 0 || options.length > 2 || config.maxSelections !== 1) return undefined;
  return options.map(({ id, label }) => ({ id, label }));
}

/**
 * Sends the push an event calls for, at most once per event (a redelivered event sends
 * nothing): skipped when push is off, for other events, and for muted chats (read now, §7.6).
 * Per-device failures are counted and logged, never thrown; a storage failure throws so the
 * event is retried (before its sent mark, nothing was sent; after it, nothing is sent twice).
 */
export async function notifyEvent(event: StoredEvent, config: InstanceConfig): Promise<DeliveryCounts | undefined> {
  if (!config.push.enabled) return undefined;
  const notification = await notificationFor(event);
  if (!notification) return undefined;
  const chat = await getChat(notification.chatId);
  if (!chat || chat.notifications_muted) return undefined;
  const agentId = await notification.agentId();
  const title = notification.title ?? config.agents.find((a) => a.id === agentId)?.name ?? config.appName;
  const payload = buildPushPayload(title, notification.body, notification.data);
  if (payload === undefined) {
    logger.warn('push payload does not fit', { eventId: event.id, chatId: notification.chatId });
    return undefined;
  }
  const subscriptions = await PushRepo.listSubscriptions();
  if (subscriptions.length === 0) return undefined;
  if (!(await PushRepo.markNotified(event.id, Date.now()))) return undefined;
  const counts = await deliver(payload, subscriptions, config);
  logger.info('push sent', { eventId: event.id, type: event.type, ...counts });
  return counts;
}
