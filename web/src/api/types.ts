/** The API's shapes as the app reads them (../shared/CONTRACT.md §2; field names exactly as served). */
import type * as Shapes from '../../../functions/model.js';
import type * as Config from '../../../functions/model/request-config.js';
import type * as Events from '../../../functions/model/events.js';
import type { ProviderId } from '../../../functions/model/rename-providers.js';

export type Timestamp = string;

/**
 * The resources are functions/model.ts's, type-only (erased from the bundle): the shapes the
 * service builds its answers from. `Chat.last_message_role` and the rest read as declared there.
 */
export type Chat = Shapes.Chat;
export type Role = Shapes.MessageRole;
export type StreamState = Shapes.StreamState;
export type Message = Shapes.Message;

/** An interactive request's configuration, as functions/model/request-config.ts declares it. */
export type ChoiceOption = Config.ChoiceOption;
export type ChoiceConfig = Config.ChoiceConfig;
export type TextInputConfig = Config.TextInputConfig;
export type FormFieldType = Config.FormFieldType;
export type FormField = Config.FormField;
export type FormConfig = Config.FormConfig;

interface RequestBase {
  id: string;
  chat_id: string;
  status: 'pending' | 'resolved' | 'cancelled';
  title: string;
  body: string | null;
  created_at: Timestamp;
  resolved_at: Timestamp | null;
  resolved_by: 'user' | 'backend' | null;
  resolution_payload: Record<string, unknown> | null;
  trace: Record<string, unknown> | null;
}
export type ChatRequest =
  | (RequestBase & { type: 'choice'; config: ChoiceConfig })
  | (RequestBase & { type: 'text_input'; config: TextInputConfig })
  | (RequestBase & { type: 'form'; config: FormConfig });

export type FormValue = Config.FormValue;
export type Resolution = Config.ResolutionPayload;

export type Media = Shapes.Media;

/** An opened upload session: POST a form to `url` (every field, then the file as `file`), then finalize. */
export interface UploadSession {
  uploadId: string;
  url: string;
  fields: Record<string, string>;
  expiresAt: Timestamp;
  maxUploadBytes: number;
}

export interface Agent {
  id: string;
  name: string;
  description: string;
  avatarUrl?: string;
  defaultModelId?: string;
}
export interface Model {
  id: string;
  name: string;
  description: string;
  metadata?: Record<string, string>;
}

export interface PublicConfig {
  appName: string;
  maxUploadBytes: number;
  /** What one upload request carries (larger files go through an upload session); not an OpenGram field. */
  directUploadMaxBytes?: number;
  allowedMimeTypes: string[];
  titleMaxChars: number;
  defaultModelIdForNewChats?: string;
  agents: Agent[];
  models: Model[];
  security: {
    instanceSecretEnabled: boolean;
    readEndpointsRequireInstanceSecret: boolean;
    /** This project's extension: the deployment sets the secret, so it cannot be changed through the API. */
    secretSetByDeployment?: boolean;
  };
  push: { enabled: boolean; vapidPublicKey: string | null; subject: string | null };
  hooks: Hook[];
  autoRename: { enabled: boolean; provider: string; modelId: string; hasApiKey: boolean } | null;
  autoRenameProviders: AutoRenameProvider[];
}

/** A webhook as GET /config reports it: its signing secret and headers are never returned, only whether they are stored. */
export interface Hook {
  url: string;
  events: string[];
  timeoutMs: number;
  maxRetries: number;
  hasSigningSecret?: boolean;
  hasHeaders?: boolean;
}

export interface AutoRenameProvider {
  id: ProviderId;
  name: string;
  envVar: string;
  hasEnvKey: boolean;
  cheapModels: { id: string; label: string }[];
}

/** PATCH /config/admin's body as the settings screen sends it (docs/divergences.md "Settings without rawConfig"). */
export interface AdminConfigChange {
  agents?: Record<string, unknown>[];
  models?: Record<string, unknown>[];
  defaultModelIdForNewChats?: string | null;
  security?: { instanceSecretEnabled?: boolean; readEndpointsRequireInstanceSecret?: boolean; instanceSecret?: string };
  push?: { enabled?: boolean; subject?: string };
  autoRename?: { enabled: boolean; provider: string; modelId: string; apiKey?: string } | null;
  hooks?: Record<string, unknown>[];
}

/** The browser's PushSubscription JSON as POST /push/subscribe takes it (contract §5.10.1). */
export interface PushSubscriptionBody {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

export interface Page<T> {
  data: T[];
  cursor: { next: string | null; hasMore: boolean };
}

export interface TagSuggestion {
  name: string;
  usage_count: number;
}

/** GET /search (§5.7, §9): `titles` matches chat titles, `messages` final message text. */
export type SearchScope = 'all' | 'titles' | 'messages';
/** The snippet is the title itself, not escaped. */
export interface ChatHit {
  id: string;
  title: string;
  snippet: string;
  agent_ids: string[];
}
/** The snippet is HTML-escaped text with `<mark>` … `</mark>` around matched tokens (§9.3). */
export interface MessageHit {
  id: string;
  chat_id: string;
  chat_title: string;
  snippet: string;
  agent_ids: string[];
}
export interface SearchResults {
  chats: ChatHit[];
  messages: MessageHit[];
  cursor: { next: string | null; hasMore: boolean };
}

/** An event from the stream (§2.12), its payload typed by its type: functions/model/events.ts's catalog. */
export type EventEnvelope = Events.EventEnvelope;

/** The error envelope of every non-2xx answer (§1.7). */
export interface ErrorBody {
  error: { code: string; message: string; details: Record<string, unknown> | null };
}
