/**
 * The auto-rename providers (contract §10.3): one adapter per API shape, each a request builder
 * and a reply reader, called with global fetch and a per-call timeout (AUTO_RENAME_TIMEOUT_MS,
 * 15 s by default). Anthropic's Messages API; the OpenAI-compatible chat completions of OpenAI,
 * xAI and OpenRouter; Google's `generateContent` with the key in the query string. Base URLs
 * are the public APIs unless AUTO_RENAME_BASE_URLS names another (tests: a fake on loopback).
 * The providers are listed once, in model/rename-providers.ts; their adapters are keyed by its ids.
 *
 * API keys go into the request and nowhere else: error texts built here have any occurrence of
 * the key replaced (a provider or a network error could echo it), and nothing here logs.
 */
import { RENAME_PROVIDERS } from '../model/rename-providers.js';
import type { ProviderId, RenameProvider } from '../model/rename-providers.js';
import { env } from './env.js';

export type { ProviderId } from '../model/rename-providers.js';
export { isProviderId } from '../model/rename-providers.js';

/** How each provider's API is called. */
interface Adapter {
  shape: 'anthropic' | 'openai-compatible' | 'google';
  /** The API root the request path is appended to. */
  baseUrl: string;
  /** The token-limit field of an OpenAI-compatible body (OpenAI's newer models refuse `max_tokens`). */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
}

const ADAPTERS = {
  anthropic: { shape: 'anthropic', baseUrl: 'https://api.anthropic.com/v1' },
  openai: {
    shape: 'openai-compatible',
    baseUrl: 'https://api.openai.com/v1',
    maxTokensField: 'max_completion_tokens',
  },
  google: { shape: 'google', baseUrl: 'https://generativelanguage.googleapis.com/v1beta' },
  xai: { shape: 'openai-compatible', baseUrl: 'https://api.x.ai/v1', maxTokensField: 'max_completion_tokens' },
  openrouter: { shape: 'openai-compatible', baseUrl: 'https://openrouter.ai/api/v1', maxTokensField: 'max_tokens' },
} as const satisfies Record<ProviderId, Adapter>;

/** Each provider (model/rename-providers.ts) by its id, with its adapter. */
export const PROVIDERS = Object.fromEntries(RENAME_PROVIDERS.map((p) => [p.id, { ...p, ...ADAPTERS[p.id] }])) as {
  [Id in ProviderId]: Extract<RenameProvider, { id: Id }> & (typeof ADAPTERS)[Id];
};

/** The key the environment holds for a provider (its variables in order), if any. */
export function envKeyFor(provider: ProviderId): string | undefined {
  const e = env();
  for (const name of PROVIDERS[provider].envVars) {
    const value = e[name];
    if (typeof value === 'string' && value.trim() !== '') return value;
  }
  return undefined;
}

/** Anthropic's API version header: the stable one its Messages API documents. */
const ANTHROPIC_VERSION = '2023-06-01';
/** Provider error bodies are quoted in 400 messages and logs: at most this many characters. */
const BODY_QUOTE_CHARS = 2000;
/** The reference sets a temperature for Anthropic only (§10.4); OpenAI's newer models refuse one. */
const ANTHROPIC_TEMPERATURE = 0.2;

export interface Generation {
  /** The instruction (system prompt). */
  system: string;
  /** The user turn. */
  prompt: string;
  maxTokens: number;
}

export interface ProviderRequest {
  url: string;
  method: 'POST';
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

function baseUrlOf(provider: ProviderId): string {
  const override = env().AUTO_RENAME_BASE_URLS?.[provider];
  return (override ?? PROVIDERS[provider].baseUrl).replace(/\/+$/, '');
}

/** The exact request an adapter sends (exported for the tests' fake provider and its checks). */
export function providerRequest(provider: ProviderId, modelId: string, apiKey: string, g: Generation): ProviderRequest {
  const base = baseUrlOf(provider);
  const json = { 'content-type': 'application/json' };
  const spec = PROVIDERS[provider];
  switch (spec.shape) {
    case 'anthropic':
      return {
        url: `${base}/messages`,
        method: 'POST',
        headers: { ...json, 'x-api-key': apiKey, 'anthropic-version': ANTHROPIC_VERSION },
        body: {
          model: modelId,
          max_tokens: g.maxTokens,
          temperature: ANTHROPIC_TEMPERATURE,
          system: g.system,
          messages: [{ role: 'user', content: g.prompt }],
        },
      };
    case 'openai-compatible':
      return {
        url: `${base}/chat/completions`,
        method: 'POST',
        headers: { ...json, authorization: `Bearer ${apiKey}` },
        body: {
          model: modelId,
          messages: [
            { role: 'system', content: g.system },
            { role: 'user', content: g.prompt },
          ],
          [spec.maxTokensField ?? 'max_tokens']: g.maxTokens,
        },
      };
    case 'google':
      return {
        url: `${base}/models/${encodeURIComponent(modelId)}:generateContent?key=${encodeURIComponent(apiKey)}`,
        method: 'POST',
        headers: json,
        body: {
          systemInstruction: { parts: [{ text: g.system }] },
          contents: [{ role: 'user', parts: [{ text: g.prompt }] }],
          generationConfig: { maxOutputTokens: g.maxTokens },
        },
      };
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** The generated text of a successful reply ('' when it has none). */
export function replyText(provider: ProviderId, reply: unknown): string {
  if (!isObject(reply)) return '';
  switch (PROVIDERS[provider].shape) {
    case 'anthropic':
      return list(reply.content)
        .filter((block) => isObject(block) && block.type === 'text' && typeof block.text === 'string')
        .map((block) => (block as { text: string }).text)
        .join('');
    case 'openai-compatible': {
      const message = list(reply.choices).find(isObject)?.message;
      return isObject(message) && typeof message.content === 'string' ? message.content : '';
    }
    case 'google': {
      const content = list(reply.candidates).find(isObject)?.content;
      return list(isObject(content) ? content.parts : undefined)
        .map((part) => (isObject(part) && typeof part.text === 'string' ? part.text : ''))
        .join('');
    }
  }
}

/** The provider answered with an error status. `body` is already free of the key and cut. */
export class ProviderHttpError extends Error {
  constructor(
    readonly provider: ProviderId,
    readonly status: number,
    readonly body: string,
  ) {
    super(`${PROVIDERS[provider].name} answered ${status}`);
  }
}

/** The request never got an answer (network error, timeout); the message is the underlying one. */
export class ProviderUnreachableError extends Error {}

const redact = (text: string, apiKey: string): string => (apiKey ? text.split(apiKey).join('[redacted]') : text);

/** An error's message (duck-typed: fetch's errors may come from another realm than this module's Error). */
const messageOf = (error: unknown): string | undefined =>
  typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string'
    ? (error as { message: string }).message
    : undefined;

function underlyingMessage(error: unknown): string {
  const message = messageOf(error) ?? String(error);
  // undici's TypeError "fetch failed" carries the real reason (ECONNREFUSED, a TLS error) in `cause`.
  const cause = messageOf((error as { cause?: unknown } | undefined)?.cause);
  return message === 'fetch failed' && cause ? cause : message;
}

/**
 * Sends one generation and answers the reply's text. Throws ProviderHttpError for an error
 * status, ProviderUnreachableError for a network error or the timeout.
 */
export async function generate(provider: ProviderId, modelId: string, apiKey: string, g: Generation): Promise<string> {
  const request = providerRequest(provider, modelId, apiKey, g);
  let response: Response;
  let text: string;
  try {
    response = await fetch(request.url, {
      method: request.method,
      headers: request.headers,
      body: JSON.stringify(request.body),
      signal: AbortSignal.timeout(env().AUTO_RENAME_TIMEOUT_MS),
    });
    text = await response.text();
  } catch (error) {
    throw new ProviderUnreachableError(redact(underlyingMessage(error), apiKey));
  }
  if (!response.ok) {
    throw new ProviderHttpError(provider, response.status, redact(text, apiKey).slice(0, BODY_QUOTE_CHARS));
  }
  let reply: unknown;
  try {
    reply = JSON.parse(text);
  } catch {
    throw new ProviderUnreachableError(`${PROVIDERS[provider].name} answered ${response.status} without JSON.`);
  }
  return replyText(provider, reply);
}
