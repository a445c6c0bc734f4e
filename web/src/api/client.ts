/**
 * The one module that talks to the API, through openapi-fetch typed by the service's own OpenAPI
 * document (schema.d.ts, generated: `npm run web:types`): a path, a parameter or a body the
 * document does not have fails the typecheck. Same origin, so the session cookie (HttpOnly,
 * Path=/api) travels with every request and the page never holds the instance secret. Every POST
 * and PATCH may carry an Idempotency-Key: a retry of the same action reuses its key, so a write
 * whose answer was lost is not applied twice (contract §1.10).
 */
import createClient from 'openapi-fetch';
import type { paths } from './schema.js';
import type {
  AdminConfigChange,
  AutoRenameProvider,
  Chat,
  ChatRequest,
  DecisionPage,
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

export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** Called when the service answers 401: the session ended (expired, signed out elsewhere, secret rotated). */
let onUnauthorized: () => void = () => {};
export const setUnauthorizedHandler = (handler: () => void) => {
  onUnauthorized = handler;
};

/** The event stream cannot tell a 401 from other failures (EventSource hides the status): it asks. */
export async function checkStillSignedIn(): Promise<void> {
  if (!(await api.probeSession().catch(() => true))) onUnauthorized();
}

/** How long the stream's cursor check waits for an answer (api.streamRefusesCursor). */
const STREAM_PROBE_MS = 5000;

export const newIdempotencyKey = (): string => crypto.randomUUID();

const client = createClient<paths>({
  baseUrl: '',
  credentials: 'same-origin',
  headers: { accept: 'application/json' },
});

interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * The answer's body, or an ApiError: the envelope's code and message (§1.7), Retry-After, and 0
 * NETWORK_ERROR when the service could not be reached. A 401 ends the session unless the caller
 * expects one (the sign-in form's own calls).
 */
async function settle<T>(call: Promise<Answer<T>>, expectUnauthorized = false): Promise<T> {
  let answer: Answer<T>;
  try {
    answer = await call;
  } catch (error) {
    if (error instanceof DOMException && error.name === 'AbortError') throw error;
    throw new ApiError(0, 'NETWORK_ERROR', 'The service could not be reached.');
  }
  const { response } = answer;
  if (response.ok) return answer.data as T;
  const envelope = (answer.error as ErrorBody | undefined)?.error;
  const retryAfter = Number(response.headers.get('retry-after'));
  if (response.status === 401 && !expectUnauthorized) onUnauthorized();
  throw new ApiError(
    response.status,
    envelope?.code ?? 'HTTP_ERROR',
    envelope?.message ?? `The service answered ${response.status}.`,
    envelope?.details ?? null,
    Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
  );
}

const keyed = (key: string) => ({ 'Idempotency-Key': key });
const chat = (chatId: string) => ({ chatId });
/** Query parameters as the document types them (strings), leaving out the unset ones. */
const query = <Q extends Record<string, string | number | boolean | null | undefined>>(params: Q) =>
  Object.fromEntries(
    Object.entries(params)
      .filter(([, value]) => value !== undefined && value !== null && value !== '')
      .map(([key, value]) => [key, String(value)]),
  ) as Record<string, string>;

const enc = encodeURIComponent;

export const api = {
  // Sessions (docs/web-app.md "Browser sessions"): the secret goes only in this body, never anywhere else.
  signIn: (secret: string) =>
    settle(client.POST('/api/v1/auth/session', { body: { secret } }), true).then(() => undefined),
  /** Whether this browser holds a valid session (or the instance is open): the cookie is HttpOnly. */
  probeSession: async (): Promise<boolean> => {
    try {
      await settle(client.POST('/api/v1/auth/session', { body: {} }), true);
      return true;
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) return false;
      throw error;
    }
  },
  /**
   * Whether the event stream refuses `cursor` (400: unknown, or past retention). EventSource hides
   * why a connection failed, and only this answer may cost the page its place: a refused connection
   * (the service restarting, the network gone) must not. Reads the status only: a stream that
   * opens (200) is closed at once; no answer within STREAM_PROBE_MS counts as "not refused".
   */
  streamRefusesCursor: async (cursor: string): Promise<boolean> => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), STREAM_PROBE_MS);
    try {
      const { response } = await client.GET('/api/v1/events/stream', {
        params: { query: { cursor, ephemeral: 'false', limit: '1' } },
        headers: { accept: 'text/event-stream' },
        parseAs: 'stream',
        signal: controller.signal,
      });
      return response.status === 400;
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
      controller.abort();
    }
  },
  signOut: () => settle(client.DELETE('/api/v1/auth/session'), true).then(() => undefined),
  signOutEverywhere: () => settle(client.DELETE('/api/v1/auth/sessions')).then(() => undefined),

  config: (): Promise<PublicConfig> => settle(client.GET('/api/v1/config'), true),
  updateConfig: (body: AdminConfigChange, idempotencyKey: string) =>
    settle(
      client.PATCH('/api/v1/config/admin', {
        body,
        params: { header: keyed(idempotencyKey) },
      }),
    ),
  testAutoRename: (body: { provider: AutoRenameProvider['id']; modelId: string; apiKey?: string }) =>
    settle(client.POST('/api/v1/config/admin/validate-auto-rename', { body })),

  listChats: (
    params: { archived: boolean; tag?: string; agentId?: string; cursor?: string | null; limit?: number },
    signal?: AbortSignal,
  ): Promise<Page<Chat>> => settle(client.GET('/api/v1/chats', { params: { query: query(params) }, signal })),
  getChat: (chatId: string, signal?: AbortSignal): Promise<Chat> =>
    settle(client.GET('/api/v1/chats/{chatId}', { params: { path: chat(chatId) }, signal })),
  createChat: (
    body: { agentIds: string[]; modelId?: string; title?: string; firstMessage?: string; tags?: string[] },
    idempotencyKey: string,
  ): Promise<Chat> => settle(client.POST('/api/v1/chats', { body, params: { header: keyed(idempotencyKey) } })),
  updateChat: (
    chatId: string,
    body: { title?: string; tags?: string[]; pinned?: boolean; modelId?: string; notificationsMuted?: boolean },
  ): Promise<Chat> =>
    settle(
      client.PATCH('/api/v1/chats/{chatId}', {
        body,
        params: { path: chat(chatId), header: keyed(newIdempotencyKey()) },
      }),
    ),
  archive: (chatId: string, archived: boolean) =>
    settle(
      client.POST(archived ? '/api/v1/chats/{chatId}/archive' : '/api/v1/chats/{chatId}/unarchive', {
        params: { path: chat(chatId), header: keyed(newIdempotencyKey()) },
      }),
    ),
  markRead: (chatId: string) =>
    settle(client.POST('/api/v1/chats/{chatId}/mark-read', { params: { path: chat(chatId) } })),
  markUnread: (chatId: string) =>
    settle(
      client.POST('/api/v1/chats/{chatId}/mark-unread', {
        params: { path: chat(chatId), header: keyed(newIdempotencyKey()) },
      }),
    ),
  userTyping: (chatId: string) =>
    settle(client.POST('/api/v1/chats/{chatId}/user-typing', { params: { path: chat(chatId) } })).then(() => undefined),

  listMessages: (chatId: string, params: { cursor?: string | null; limit?: number } = {}): Promise<Page<Message>> =>
    settle(client.GET('/api/v1/chats/{chatId}/messages', { params: { path: chat(chatId), query: query(params) } })),
  sendMessage: (chatId: string, content: string, idempotencyKey: string, mediaIds?: string[]): Promise<Message> =>
    settle(
      client.POST('/api/v1/chats/{chatId}/messages', {
        body: {
          role: 'user',
          senderId: 'user:primary',
          content,
          ...(mediaIds?.length ? { trace: { mediaIds } } : {}),
        },
        params: { path: chat(chatId), header: keyed(idempotencyKey) },
      }),
    ),

  /** Every request of the chat, pending and closed (resolved, cancelled), oldest first (§5.5.2). */
  allRequests: (chatId: string) =>
    // The document types a request's configuration loosely; the app reads it by its type (types.ts).
    settle(
      client.GET('/api/v1/chats/{chatId}/requests', { params: { path: chat(chatId), query: { status: 'all' } } }),
    ) as Promise<{ data: ChatRequest[] }>,
  resolveRequest: (requestId: string, resolution: Resolution, idempotencyKey: string) =>
    settle(
      client.POST('/api/v1/requests/{requestId}/resolve', {
        body: resolution,
        params: { path: { requestId }, header: keyed(idempotencyKey) },
      }),
    ) as Promise<ChatRequest>,

  /** Requests of every chat (§5.5.6): pending ones soonest deadline first, then those without, oldest first. */
  listRequests: (params: {
    status: 'pending' | 'resolved' | 'cancelled' | 'all';
    limit?: number;
    cursor?: string | null;
  }) => settle(client.GET('/api/v1/requests', { params: { query: query(params) } })) as Promise<Page<ChatRequest>>,
  /** A page of the decision log (§5.5.6): entries after `after`, ascending `seq`; `next` is null when none follow. */
  decisions: (params: { after?: number; limit?: number }): Promise<DecisionPage> =>
    settle(client.GET('/api/v1/decisions', { params: { query: query(params) } })),

  media: (mediaId: string): Promise<Media> =>
    settle(client.GET('/api/v1/media/{mediaId}', { params: { path: { mediaId } } })),
  /** An unattached medium the user took back (409 once a message holds it). */
  deleteMedia: (mediaId: string): Promise<Media> =>
    settle(client.DELETE('/api/v1/media/{mediaId}', { params: { path: { mediaId } } })),
  /**
   * Files above the one-request ceiling (docs/architecture.md "Large files"): the form goes to `url`,
   * then finalize.
   */
  openUploadSession: (
    chatId: string,
    body: { fileName: string; contentType: string; byteSize: number; kind?: Media['kind'] },
  ): Promise<UploadSession> =>
    settle(client.POST('/api/v1/chats/{chatId}/media/uploads', { body, params: { path: chat(chatId) } })),
  finalizeUpload: (chatId: string, uploadId: string): Promise<Media> =>
    settle(
      client.POST('/api/v1/chats/{chatId}/media/uploads/{uploadId}/complete', {
        params: { path: { chatId, uploadId } },
      }),
    ),
  fileUrl: (mediaId: string) => `${API}/files/${enc(mediaId)}`,
  thumbnailUrl: (mediaId: string) => `${API}/files/${enc(mediaId)}/thumbnail`,

  search: (
    params: { q: string; scope: SearchScope; cursor?: string | null; limit?: number },
    signal?: AbortSignal,
  ): Promise<SearchResults> =>
    settle(client.GET('/api/v1/search', { params: { query: { ...query(params), q: params.q } }, signal })),

  tagSuggestions: (q: string, signal?: AbortSignal): Promise<{ data: TagSuggestion[] }> =>
    settle(client.GET('/api/v1/tags/suggestions', { params: { query: query({ q, limit: 8 }) }, signal })),

  // Web push (contract §5.10): this browser's subscription, stored by its endpoint.
  pushSubscribe: (subscription: PushSubscriptionBody) =>
    // The document leaves the subscription's fields open (the service checks them itself, §5.10.1).
    settle(client.POST('/api/v1/push/subscribe', { body: { ...subscription } })),
  pushUnsubscribe: (endpoint: string) => settle(client.DELETE('/api/v1/push/subscribe', { body: { endpoint } })),
};
