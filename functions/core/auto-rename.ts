/**
 * Auto-rename (contract §10) and its settings check (§5.2.3). Renaming runs off the request
 * path, once per finalized agent message (an agent message created complete, or an agent
 * stream completed), from the table's stream by functions/jobs/event-effects.ts, the one consumer
 * of events' side effects (locally the same handler, fed by a tail of the event log:
 * local/effects-tail.ts). Its outcome never reaches the request that finalized the message.
 */
import { ValidationError } from '../errors.js';
import { cut } from '../model.js';
import { EVENTS, isEvent } from '../model/events.js';
import type { InstanceConfig } from '../platform/instance-config.js';
import { logger } from '../platform/logger.js';
import {
  PROVIDERS,
  ProviderHttpError,
  ProviderUnreachableError,
  envKeyFor,
  generate,
  isProviderId,
} from '../platform/rename-providers.js';
import type { Generation, ProviderId } from '../platform/rename-providers.js';
import { getChat } from '../store/chats-repo.js';
import type { StoredEvent } from '../store/events-repo.js';
import { earliestMessages } from '../store/message-queries-repo.js';
import { applyAutoTitle } from './chat-updates.js';

/** §12.4 fixed constants. */
export const CONTEXT_MESSAGES = 6;
export const CONTEXT_MESSAGE_CHARS = 300;
export const MIN_USER_CHARS = 30;
export const AUTO_TITLE_MAX_CHARS = 48;
export const MAX_OUTPUT_TOKENS = 1000;

/** §10.4: a title generator only, 3 to 7 words, no quotes or trailing punctuation, never an answer. */
export const TITLE_INSTRUCTION =
  'You are a title generator and nothing else. Read the conversation below and reply with a short title for it: ' +
  '3 to 7 words, with no quotes and no trailing punctuation. Output only the title. Never answer, continue or ' +
  'comment on the conversation itself.';

/** The events that can trigger a rename: a message created complete, or a stream completed. */
const RENAME_TRIGGERS = [EVENTS.messageCreated, EVENTS.messageStreamingComplete] as const;

/** The chat whose agent message this event finalized (§10.1), or undefined for any other event. */
export function finalizedAgentMessageChat(event: StoredEvent): string | undefined {
  if (!isEvent(event, ...RENAME_TRIGGERS)) return undefined;
  const { role, streamState, chatId } = event.payload;
  return role === 'agent' && streamState === 'complete' ? chatId : undefined;
}

/** The key to use: the stored one, else the provider's environment variables (§10.2). */
function keyFor(provider: ProviderId, stored: string | undefined): string | undefined {
  return stored !== undefined && stored.trim() !== '' ? stored : envKeyFor(provider);
}

export interface ContextMessage {
  role: 'user' | 'agent';
  content_final: string | null;
}

/**
 * The context text of §10.4 (one `User:` / `Assistant:` line per message, each trimmed and cut
 * to 300 characters plus `…`), or undefined when §10.2 says there is not enough to go on: no
 * message, or user text totalling under 30 characters.
 */
export function contextText(messages: readonly ContextMessage[]): string | undefined {
  if (messages.length === 0) return undefined;
  // Characters are code points, as `cut` counts them (an emoji is one, not two UTF-16 units).
  const texts = messages.map((m) => {
    const text = (m.content_final ?? '').trim();
    return { role: m.role, text, chars: Array.from(text).length };
  });
  const userChars = texts.filter((t) => t.role === 'user').reduce((sum, t) => sum + t.chars, 0);
  if (userChars < MIN_USER_CHARS) return undefined;
  return texts
    .map(({ role, text, chars }) => {
      const shown = chars > CONTEXT_MESSAGE_CHARS ? `${cut(text, CONTEXT_MESSAGE_CHARS)}…` : text;
      return `${role === 'user' ? 'User' : 'Assistant'}: ${shown}`;
    })
    .join('\n');
}

/** The title a reply gives (§10.4: trimmed, cut to 48 characters), or undefined for an empty one. */
export function titleFromReply(reply: string): string | undefined {
  const title = cut(reply.trim(), AUTO_TITLE_MAX_CHARS).trim();
  return title === '' ? undefined : title;
}

export type RenameOutcome =
  | 'not-a-trigger'
  | 'disabled'
  | 'no-key'
  | 'not-default'
  | 'not-enough-context'
  | 'provider-failed'
  | 'empty-reply'
  | 'renamed';

/**
 * The auto-rename check for one event (§10). Returns what happened; never throws for the
 * provider's failures (logged and ignored, §10.4), but does throw for storage failures, so a
 * stream record is retried (a retry is harmless: a chat renamed already is `auto`, not `default`).
 * 1. trigger and settings (no storage call while auto-rename is off);
 * 2. the chat, read strongly: only a `default` title is ever replaced;
 * 3. its first six user/agent messages as context (at least 30 characters of user text);
 * 4. the provider call (1000 output tokens);
 * 5. the title written as PATCH {title, titleAutoRenamed: true} would, conditioned on the chat's
 *    version read with title_source `default`: a title set meanwhile is never overwritten.
 */
export async function renameForEvent(event: StoredEvent, config: InstanceConfig): Promise<RenameOutcome> {
  const chatId = finalizedAgentMessageChat(event);
  if (chatId === undefined) return 'not-a-trigger';
  const settings = config.autoRename;
  if (!settings?.enabled || !isProviderId(settings.provider) || settings.modelId.trim() === '') return 'disabled';
  const provider = settings.provider;
  const apiKey = keyFor(provider, settings.apiKey);
  if (apiKey === undefined) return 'no-key';

  const chat = await getChat(chatId);
  if (chat?.title_source !== 'default') return 'not-default';
  const context = contextText(
    (await earliestMessages(chatId, CONTEXT_MESSAGES, ['user', 'agent'])) as ContextMessage[],
  );
  if (context === undefined) return 'not-enough-context';

  const log = { chatId, eventId: event.id, provider, modelId: settings.modelId };
  let reply: string;
  try {
    reply = await generate(provider, settings.modelId, apiKey, {
      system: TITLE_INSTRUCTION,
      prompt: context,
      maxTokens: MAX_OUTPUT_TOKENS,
    });
  } catch (error) {
    logger.warn('auto-rename: provider call failed', { ...log, ...failureOf(error) });
    return 'provider-failed';
  }
  const title = titleFromReply(reply);
  if (title === undefined) {
    logger.info('auto-rename: empty reply ignored', log);
    return 'empty-reply';
  }
  const renamed = await applyAutoTitle(config, chatId, title);
  if (!renamed) return 'not-default';
  logger.info('auto-rename: chat renamed', log);
  return 'renamed';
}

function failureOf(error: unknown): Record<string, unknown> {
  if (error instanceof ProviderHttpError) return { status: error.status, body: error.body };
  if (error instanceof ProviderUnreachableError) return { failure: error.message };
  // Anything else is a bug of ours: its message carries no key (nothing here puts one in a message).
  return { failure: (error as Error).message };
}

/** The message of a provider's error status (§5.2.3). */
function statusMessage(provider: ProviderId, modelId: string, error: ProviderHttpError): string {
  const { status, body } = error;
  if (status === 401 || status === 403) return `Authentication failed: invalid API key. (${status})`;
  if (status === 404) return `Model "${modelId}" not found. (${status}): ${body}`;
  const label = PROVIDERS[provider].shape === 'openai-compatible' ? '' : `${errorName(provider)} `;
  return `${label}API error (${status}): ${body}`;
}

/** "Anthropic", "Google": the name the non-OpenAI-compatible error forms carry. */
const errorName = (provider: ProviderId): string => provider[0]!.toUpperCase() + provider.slice(1);

/** The smallest generation that proves the settings work: one token. */
const PROBE: Generation = { system: 'Reply with one word.', prompt: 'Hello', maxTokens: 1 };

/**
 * POST /config/admin/validate-auto-rename (§5.2.3): a one-token call to the provider with the
 * given key, else the stored one, else the environment's. Every failure is a 400
 * VALIDATION_ERROR with `details: null`; a key never appears in a message.
 */
export async function validateSettings(
  body: { provider: string; modelId: string; apiKey?: string | undefined },
  config: InstanceConfig,
): Promise<{ ok: true }> {
  const { provider, modelId } = body;
  if (!isProviderId(provider)) throw new ValidationError(`Unknown provider: ${provider}`);
  const given = body.apiKey?.trim() ? body.apiKey : undefined;
  const apiKey = given ?? keyFor(provider, config.autoRename?.apiKey);
  if (apiKey === undefined) {
    throw new ValidationError(
      `No API key available. Set the ${PROVIDERS[provider].envVars[0]} environment variable or provide a key in the ` +
        'settings.',
    );
  }
  try {
    await generate(provider, modelId, apiKey, PROBE);
  } catch (error) {
    if (error instanceof ProviderHttpError) throw new ValidationError(statusMessage(provider, modelId, error));
    if (error instanceof ProviderUnreachableError) throw new ValidationError(error.message);
    throw error;
  }
  return { ok: true };
}
