/**
 * The settings screen's form state, kept apart from its components: the draft made from
 * GET /config, the PATCH /config/admin body that sends only the sections the user changed (and a
 * secret only when one was typed), and where a 400's message belongs in the form.
 */
import type { AdminConfigChange, PublicConfig } from '../api/types';
import { EPHEMERAL_EVENT_TYPES, EVENT_TYPES } from '../live/events';
import { parseHeaders } from './settings-checks';

/** The persisted event types a webhook may list (contract §6.2: the ephemeral ones never reach a hook). */
export const HOOK_EVENTS: readonly string[] = EVENT_TYPES.filter((type) => !EPHEMERAL_EVENT_TYPES.has(type));

let nextKey = 0;
/** A stable React key for a row the user may add, remove or reorder. */
const rowKey = () => `row-${++nextKey}`;

export interface AgentDraft {
  key: string;
  id: string;
  name: string;
  description: string;
  defaultModelId: string;
  avatarUrl: string;
  /** Keys the service stores on the agent that the form does not edit: sent back as they were. */
  rest: Record<string, unknown>;
}

export interface ModelDraft {
  key: string;
  id: string;
  name: string;
  description: string;
  metadata: { key: string; name: string; value: string }[];
  rest: Record<string, unknown>;
}

export interface HookDraft {
  key: string;
  url: string;
  /**
   * The url the stored hook had: its signing secret and headers stay with that url
   * (docs/divergences.md "Settings without rawConfig").
   */
  storedUrl: string | undefined;
  events: string[];
  timeoutMs: string;
  maxRetries: string;
  hasSigningSecret: boolean;
  hasHeaders: boolean;
  /** Write-only: sent only when typed. */
  newSigningSecret: string;
  removeSigningSecret: boolean;
  /** Write-only, one `Name: value` a line: replaces the stored headers when typed. */
  newHeaders: string;
  removeHeaders: boolean;
}

export interface Draft {
  agents: AgentDraft[];
  models: ModelDraft[];
  defaultModelId: string;
  security: { instanceSecretEnabled: boolean; readEndpointsRequireInstanceSecret: boolean };
  push: { enabled: boolean; subject: string };
  autoRename: { enabled: boolean; provider: string; modelId: string; apiKey: string; removeApiKey: boolean };
  hooks: HookDraft[];
}

function split<T extends Record<string, unknown>>(entry: T, known: string[]): Record<string, unknown> {
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(entry)) if (!known.includes(k)) rest[k] = v;
  return rest;
}

export function draftOf(config: PublicConfig): Draft {
  const rename = config.autoRename;
  return {
    agents: config.agents.map((a) => ({
      key: rowKey(),
      id: a.id,
      name: a.name,
      description: a.description,
      defaultModelId: a.defaultModelId ?? '',
      avatarUrl: a.avatarUrl ?? '',
      rest: split({ ...a }, ['id', 'name', 'description', 'defaultModelId', 'avatarUrl']),
    })),
    models: config.models.map((m) => ({
      key: rowKey(),
      id: m.id,
      name: m.name,
      description: m.description,
      metadata: Object.entries(m.metadata ?? {}).map(([name, value]) => ({ key: rowKey(), name, value })),
      rest: split({ ...m }, ['id', 'name', 'description', 'metadata']),
    })),
    defaultModelId: config.defaultModelIdForNewChats ?? '',
    security: {
      instanceSecretEnabled: config.security.instanceSecretEnabled,
      readEndpointsRequireInstanceSecret: config.security.readEndpointsRequireInstanceSecret,
    },
    push: { enabled: config.push.enabled, subject: config.push.subject ?? '' },
    autoRename: {
      enabled: rename?.enabled ?? false,
      provider: rename?.provider ?? config.autoRenameProviders[0]?.id ?? '',
      modelId: rename?.modelId ?? '',
      apiKey: '',
      removeApiKey: false,
    },
    hooks: config.hooks.map((h) => ({
      key: rowKey(),
      url: h.url,
      storedUrl: h.url,
      events: [...h.events],
      timeoutMs: String(h.timeoutMs),
      maxRetries: String(h.maxRetries),
      hasSigningSecret: Boolean(h.hasSigningSecret),
      hasHeaders: Boolean(h.hasHeaders),
      newSigningSecret: '',
      removeSigningSecret: false,
      newHeaders: '',
      removeHeaders: false,
    })),
  };
}

export const newAgent = (): AgentDraft => ({
  key: rowKey(),
  id: '',
  name: '',
  description: '',
  defaultModelId: '',
  avatarUrl: '',
  rest: {},
});
export const newModel = (): ModelDraft => ({
  key: rowKey(),
  id: '',
  name: '',
  description: '',
  metadata: [],
  rest: {},
});
export const newMetadata = () => ({ key: rowKey(), name: '', value: '' });
export const newHook = (): HookDraft => ({
  key: rowKey(),
  url: '',
  storedUrl: undefined,
  events: [],
  timeoutMs: '5000',
  maxRetries: '3',
  hasSigningSecret: false,
  hasHeaders: false,
  newSigningSecret: '',
  removeSigningSecret: false,
  newHeaders: '',
  removeHeaders: false,
});

/** A number field as typed: a number when it is one, else the text itself (the service names the field). */
function numberOf(text: string): number | string | undefined {
  const t = text.trim();
  if (t === '') return undefined;
  const n = Number(t);
  return Number.isFinite(n) ? n : t;
}

const agentBody = (a: AgentDraft) => ({
  ...a.rest,
  id: a.id.trim(),
  name: a.name,
  description: a.description,
  ...(a.defaultModelId ? { defaultModelId: a.defaultModelId } : {}),
  ...(a.avatarUrl.trim() ? { avatarUrl: a.avatarUrl.trim() } : {}),
});

const modelBody = (m: ModelDraft) => ({
  ...m.rest,
  id: m.id.trim(),
  name: m.name,
  description: m.description,
  ...(m.metadata.length > 0 ? { metadata: Object.fromEntries(m.metadata.map((e) => [e.name.trim(), e.value])) } : {}),
});

const hookBody = (h: HookDraft) => {
  const headers = h.newHeaders.trim() ? parseHeaders(h.newHeaders) : undefined;
  return {
    url: h.url.trim(),
    events: h.events,
    timeoutMs: numberOf(h.timeoutMs),
    maxRetries: numberOf(h.maxRetries),
    ...(h.newSigningSecret
      ? { signingSecret: h.newSigningSecret }
      : h.removeSigningSecret
        ? { signingSecret: '' }
        : {}),
    ...(headers && !('line' in headers) ? { headers } : h.removeHeaders ? { headers: {} } : {}),
  };
};

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The PATCH body for what changed between the loaded draft and the edited one: untouched sections
 * are left out (another administrator's change to them is not overwritten), secrets only when typed.
 */
export function changeOf(loaded: Draft, edited: Draft): AdminConfigChange {
  const body: AdminConfigChange = {};
  const agents = edited.agents.map(agentBody);
  if (!same(agents, loaded.agents.map(agentBody))) body.agents = agents;
  const models = edited.models.map(modelBody);
  if (!same(models, loaded.models.map(modelBody))) {
    body.models = models;
    // Replacing the models drops the default model (§5.2.2): send it again.
    body.defaultModelIdForNewChats = edited.defaultModelId || null;
  } else if (edited.defaultModelId !== loaded.defaultModelId) {
    body.defaultModelIdForNewChats = edited.defaultModelId || null;
  }
  if (!same(edited.security, loaded.security)) body.security = { ...edited.security };
  if (!same(edited.push, loaded.push)) body.push = { ...edited.push };
  const r = edited.autoRename;
  const renameChanged =
    r.apiKey !== '' ||
    r.removeApiKey ||
    !same(
      { enabled: r.enabled, provider: r.provider, modelId: r.modelId },
      { enabled: loaded.autoRename.enabled, provider: loaded.autoRename.provider, modelId: loaded.autoRename.modelId },
    );
  if (renameChanged) {
    body.autoRename = {
      enabled: r.enabled,
      provider: r.provider,
      modelId: r.modelId.trim(),
      ...(r.apiKey ? { apiKey: r.apiKey } : r.removeApiKey ? { apiKey: '' } : {}),
    };
  }
  const hooks = edited.hooks.map(hookBody);
  if (!same(hooks, loaded.hooks.map(hookBody))) body.hooks = hooks;
  return body;
}

/** The draft as GET /config will report it once saved: typed secrets are not read back. */
export function withoutSecrets(draft: Draft): Draft {
  return {
    ...draft,
    autoRename: { ...draft.autoRename, apiKey: '', removeApiKey: false },
    hooks: draft.hooks.map((h) => ({
      ...h,
      newSigningSecret: '',
      removeSigningSecret: false,
      newHeaders: '',
      removeHeaders: false,
    })),
  };
}

/** Whether a configuration read shows everything a saved draft changed (no stale read). */
export const reflects = (config: PublicConfig, saved: Draft): boolean =>
  Object.keys(changeOf(draftOf(config), withoutSecrets(saved))).length === 0;

const TOP_FIELDS = /^(agents|models|hooks|push|security|autoRename|defaultModelIdForNewChats)((?:\.[A-Za-z0-9_]+)*)/;

/**
 * Which field a 400 is about, as a dotted path (`agents.1.id`, `hooks.0.url`, `push.subject`).
 * `details.field` when the service names one (`agents[1].id` is read as `agents.1.id`); else the
 * rule the message states: the configuration's validation answers with `details: null` (§5.2.2) and
 * a message that names the field (`Config validation error: agents.1.id: …`,
 * `… push.subject must not contain localhost.`, `agent "x" defaultModelId must …`).
 */
export function fieldOfError(
  message: string,
  details: Record<string, unknown> | null,
  edited: Draft,
): string | undefined {
  if (details && typeof details.field === 'string') return details.field.replace(/\[(\d+)\]/g, '.$1');
  const fieldErrors = details?.fieldErrors;
  if (fieldErrors && typeof fieldErrors === 'object') {
    const first = Object.keys(fieldErrors)[0];
    if (first) return first;
  }
  const rule = message.replace(/^Config validation error:\s*/, '');
  const agent = /^agent "(.*)" defaultModelId/.exec(rule);
  if (agent) {
    const index = edited.agents.findIndex((a) => a.id.trim() === agent[1]);
    return index >= 0 ? `agents.${index}.defaultModelId` : 'agents';
  }
  if (/^at least one model/.test(rule)) return 'models';
  if (/^at least one agent/.test(rule)) return 'agents';
  const named = TOP_FIELDS.exec(rule);
  return named ? named[0] : undefined;
}

/** The element id of a field's input (`agents.1.id` → `settings-agents-1-id`). */
export const fieldId = (path: string) => `settings-${path.replace(/\./g, '-')}`;

/**
 * The path of the nearest field the form shows for a path the service named: itself, else its
 * parents (`hooks.0.events.3` → `hooks.0.events`), checked against the inputs on the page.
 */
export function nearestField(path: string, exists: (id: string) => boolean): string | undefined {
  const parts = path.split('.');
  while (parts.length > 0) {
    const candidate = parts.join('.');
    if (exists(fieldId(candidate))) return candidate;
    parts.pop();
  }
  return undefined;
}

/** A strong random secret in the reference's shape: `og_` and 40 base64url characters (240 bits). */
export function generateSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(30));
  const text = btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
  return `og_${text}`;
}
