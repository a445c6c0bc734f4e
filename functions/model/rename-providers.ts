/**
 * The auto-rename providers (contract §10.3), listed once: the instance configuration's
 * `autoRename.provider` rule, the environment's key variables and base-URL overrides, the
 * adapters (platform/rename-providers.ts), GET /config's `autoRenameProviders` and the OpenAPI
 * document all read this list. Facts only some functions need are tables keyed by the ids
 * (`satisfies Record<ProviderId, …>`, so a provider added here fails the typecheck until each
 * has its entry): the cheap models below, the adapters' API shapes and roots in
 * platform/rename-providers.ts. Every function's environment imports this module: it stays small.
 */
/**
 * `name`: the display name (§10.3); `envVars`: the key variables, in order (the first is
 * reported as `envVar` and named in errors).
 */
export const RENAME_PROVIDERS = [
  { id: 'anthropic', name: 'Anthropic', envVars: ['ANTHROPIC_API_KEY'] },
  { id: 'openai', name: 'OpenAI', envVars: ['OPENAI_API_KEY'] },
  { id: 'google', name: 'Google Gemini', envVars: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'] },
  { id: 'xai', name: 'xAI', envVars: ['XAI_API_KEY'] },
  { id: 'openrouter', name: 'OpenRouter', envVars: ['OPENROUTER_API_KEY'] },
] as const;

export type RenameProvider = (typeof RENAME_PROVIDERS)[number];
export type ProviderId = RenameProvider['id'];

/** The provider ids, in the list's order (a zod enum takes them as they are). */
export const PROVIDER_IDS = RENAME_PROVIDERS.map((p) => p.id) as [ProviderId, ...ProviderId[]];

/** Every provider's key variables, in the list's order. */
export const PROVIDER_KEY_VARS = RENAME_PROVIDERS.flatMap((p) => p.envVars) as RenameProvider['envVars'][number][];

export const isProviderId = (id: unknown): id is ProviderId => (PROVIDER_IDS as unknown[]).includes(id);

/** The models GET /config offers for each provider (§2.11). */
export const CHEAP_MODELS = {
  anthropic: [{ id: 'claude-haiku-4-5', label: 'Claude Haiku 4.5' }],
  openai: [{ id: 'gpt-5.4-nano', label: 'GPT-5.4 Nano' }],
  google: [
    { id: 'gemini-2.5-flash-lite', label: 'gemini-2.5-flash-lite' },
    { id: 'gemini-3.1-flash-lite-preview', label: 'gemini-3.1-flash-lite-preview' },
  ],
  xai: [
    { id: 'grok-4-1-fast-reasoning', label: 'grok-4-1-fast-reasoning' },
    { id: 'grok-4-1-fast-non-reasoning', label: 'grok-4-1-fast-non-reasoning' },
  ],
  openrouter: [
    { id: 'anthropic/claude-haiku-4.5', label: 'anthropic/claude-haiku-4.5' },
    { id: 'openai/gpt-5.4-nano', label: 'openai/gpt-5.4-nano' },
    { id: 'x-ai/grok-4.1-fast', label: 'x-ai/grok-4.1-fast' },
    { id: 'google/gemini-3.1-flash-lite-preview', label: 'google/gemini-3.1-flash-lite-preview' },
    { id: 'google/gemini-2.5-flash-lite', label: 'google/gemini-2.5-flash-lite' },
  ],
} as const satisfies Record<ProviderId, readonly { id: string; label: string }[]>;
