/**
 * The one module that talks to the API. Same origin, so the session cookie (HttpOnly, Path=/api)
 * travels with every request and the page never holds the instance secret. Every POST and PATCH
 * may carry an Idempotency-Key: a retry of the same action reuses its key, so a write whose answer
 * was lost is not applied twice (contract §1.10).
 */
import type {
  AdminConfigChange,
  Chat,
  ChatRequest,
  ErrorBody,
  Media,
  Message,
  Page,
  PublicConfig,
  PushSubscriptionBody,
  Resolution,
  SearchResults,
  SearchScope,
  TagSuggestion,
  UploadSession,
} from './types';

export const API = '/api/v1';

/** A non-2xx answer, with the contract's error envelope when the service sent one. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> | null = null,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
  /** Worth retrying as is: the service was busy or unreachable, not the request wrong. */
  get transient(): boolean {
    return this.status === 0 || this.status === 429 || this.status >= 500;
  }
}

/** Called when the service answers 401: the session ended (expired, signed out elsewhere, secret rotated). */
let onUnauthorized: () => void = () => {};
export const setUnauthorizedHandler = (handler: () => void) => {
  onUnauthorized = handler;
};

/** The event stream cannot tell a 401 from other failures (EventSource hides the status): it asks. */
export async function checkStillSignedIn(): Promise<void> {
  if (!(await api.probeSession().catch(() => true))) onUnauthorized();
}

export const newIdempotencyKey = (): string => crypto.randomUUID();

interface Options {
  body?: unknown;
  idempotencyKey?: string;
  signal?: AbortSignal;
  /** Do not treat a 401 as the end of the session (the sign-in form's own calls). */
  expectUnauthorized?: boolean;
}

async function call<T>(method: string, path: string, options: Options = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
  let response: Response;
  try {
    response = await fetch(`${API}${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      credentials: 'same-origin',
      signal: options.signal,
    });
  } catch (error) {
    if (options.signal?.aborted) throw error;
    throw new ApiError(0, 'NETWORK_ERROR', 'The service could not be reached.');
  }
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  const parsed: unknown = text ? safeJson(text) : undefined;
  if (response.ok) return parsed as T;
  const envelope = (parsed as ErrorBody | undefined)?.error;
  const retryAfter = Number(response.headers.get('retry-after'));
  const error = new ApiError(
    response.status,
    envelope?.code ?? 'HTTP_ERROR',
    envelope?.message ?? `The service answered ${response.status}.`,
    envelope?.details ?? null,
    Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
  );
  if (response.status === 401 && !options.expectUnauthorized) onUnauthorized();
  throw error;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const query = (params: Record<string, string | number | boolean | undefined | null>): string => {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== '') search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
};

const enc = encodeURIComponent;

export const api = {
  // Sessions (docs/web-app.md "Browser sessions"): the secret goes only in this body, never anywhere else.
  signIn: (secret: string) => call<void>('POST', '/auth/session', { body: { secret }, expectUnauthorized: true }),
  /** Whether this browser holds a valid session (or the instance is open): the cookie is HttpOnly. */
  probeSession: async (): Promise<boolean> => {
    try {
      await call<void>('POST', '/auth/session', { body: {}, expectUnauthorized: true });
      return true;
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) return false;
      throw error;
    }
  },
  signOut: () => call<void>('DELETE', '/auth/session', { expectUnauthorized: true }),
  signOutEverywhere: () => call<void>('DELETE', '/auth/sessions'),

  config: () => call<PublicConfig>('GET', '/config', { expectUnauthorized: true }),
  updateConfig: (body: AdminConfigChange, idempotencyKey: string) =>
    call<{ ok: true }>('PATCH', '/config/admin', { body, idempotencyKey }),
  testAutoRename: (body: { provider: string; modelId: string; apiKey?: string }) =>
    call<{ ok: true }>('POST', '/config/admin/validate-auto-rename', { body }),

  listChats: (
    params: { archived: boolean; tag?: string; agentId?: string; cursor?: string | null; limit?: number },
    signal?: AbortSignal,
  ) =>
    call<Page<Chat>>(
      'GET',
      `/chats${query({ archived: params.archived, tag: params.tag, agentId: params.agentId, cursor: params.cursor, limit: params.limit })}`,
      {
        signal,
      },
    ),
  getChat: (chatId: string) => call<Chat>('GET', `/chats/${enc(chatId)}`),
  createChat: (
    body: { agentIds: string[]; modelId?: string; title?: string; firstMessage?: string; tags?: string[] },
    idempotencyKey: string,
  ) => call<Chat>('POST', '/chats', { body, idempotencyKey }),
  updateChat: (
    chatId: string,
    body: { title?: string; tags?: string[]; pinned?: boolean; modelId?: string; notificationsMuted?: boolean },
  ) => call<Chat>('PATCH', `/chats/${enc(chatId)}`, { body, idempotencyKey: newIdempotencyKey() }),
  archive: (chatId: string, archived: boolean) =>
    call<{ ok: true }>('POST', `/chats/${enc(chatId)}/${archived ? 'archive' : 'unarchive'}`, {
      idempotencyKey: newIdempotencyKey(),
    }),
  markRead: (chatId: string) => call<{ ok: true }>('POST', `/chats/${enc(chatId)}/mark-read`),
  markUnread: (chatId: string) =>
    call<{ ok: true }>('POST', `/chats/${enc(chatId)}/mark-unread`, { idempotencyKey: newIdempotencyKey() }),
  userTyping: (chatId: string) => call<void>('POST', `/chats/${enc(chatId)}/user-typing`),

  listMessages: (chatId: string, params: { cursor?: string | null; limit?: number } = {}) =>
    call<Page<Message>>('GET', `/chats/${enc(chatId)}/messages${query(params)}`),
  sendMessage: (chatId: string, content: string, idempotencyKey: string, mediaIds?: string[]) =>
    call<Message>('POST', `/chats/${enc(chatId)}/messages`, {
      body: {
        role: 'user',
        senderId: 'user:primary',
        content,
        ...(mediaIds?.length ? { trace: { mediaIds } } : {}),
      },
      idempotencyKey,
    }),

  /** Every request of the chat, pending and closed (resolved, cancelled), oldest first (§5.5.2). */
  allRequests: (chatId: string) =>
    call<{ data: ChatRequest[] }>('GET', `/chats/${enc(chatId)}/requests${query({ status: 'all' })}`),
  resolveRequest: (requestId: string, resolution: Resolution, idempotencyKey: string) =>
    call<ChatRequest>('POST', `/requests/${enc(requestId)}/resolve`, { body: resolution, idempotencyKey }),

  media: (mediaId: string) => call<Media>('GET', `/media/${enc(mediaId)}`),
  /** An unattached medium the user took back (409 once a message holds it). */
  deleteMedia: (mediaId: string) => call<Media>('DELETE', `/media/${enc(mediaId)}`),
  /**
   * Files above the one-request ceiling (docs/architecture.md "Large files"): the form goes to `url`,
   * then finalize.
   */
  openUploadSession: (
    chatId: string,
    body: { fileName: string; contentType: string; byteSize: number; kind?: Media['kind'] },
  ) => call<UploadSession>('POST', `/chats/${enc(chatId)}/media/uploads`, { body }),
  finalizeUpload: (chatId: string, uploadId: string) =>
    call<Media>('POST', `/chats/${enc(chatId)}/media/uploads/${enc(uploadId)}/complete`),
  fileUrl: (mediaId: string) => `${API}/files/${enc(mediaId)}`,
  thumbnailUrl: (mediaId: string) => `${API}/files/${enc(mediaId)}/thumbnail`,

  search: (params: { q: string; scope: SearchScope; cursor?: string | null; limit?: number }, signal?: AbortSignal) =>
    call<SearchResults>('GET', `/search${query(params)}`, { signal }),

  tagSuggestions: (q: string, signal?: AbortSignal) =>
    call<{ data: TagSuggestion[] }>('GET', `/tags/suggestions${query({ q, limit: 8 })}`, { signal }),

  // Web push (contract §5.10): this browser's subscription, stored by its endpoint.
  pushSubscribe: (subscription: PushSubscriptionBody) =>
    call<{ id: string; endpoint: string }>('POST', '/push/subscribe', { body: subscription }),
  pushUnsubscribe: (endpoint: string) =>
    call<{ ok: true; removed: boolean }>('DELETE', '/push/subscribe', { body: { endpoint } }),
};
