/**
 * The auto-rename providers (contract §10.3), listed once: the instance configuration's
 * `autoRename.provider` rule, the environment's key variables and base-URL overrides, the
 * adapters (platform/rename-providers.ts), GET /config's `autoRenameProviders` and the OpenAPI
 * document all read this list. A provider added here is offered everywhere; its adapter shape
 * must be one platform/rename-providers.ts knows.
 */
export const RENAME_PROVIDERS = [
  {
    id: 'anthropic',
    /** Display name (§10.3). */
    name: 'Anthropic',
    /** Key variables, in order: the first is reported as `envVar` and named in errors. */
    envVars: ['ANTHROPIC_API_KEY'],
    /** The API the adapter speaks. */
    shape: 'anthropic',
    /** The API root the request path is appended to (AUTO_RENAME_BASE_URLS overrides it). */
    baseUrl: 'https://api.anthropic.com/v1',
    /** Offered by GET /config (§2.11). */
    cheapModels: [{ id: 'claude-haiku-4-5', label: 'Claude Haiku 4.5' }],
  },
  {
    id: 'openai',
    name: 'OpenAI',
    envVars: ['OPENAI_API_KEY'],
    shape: 'openai-compatible',
    baseUrl: 'https://api.openai.com/v1',
    /** The token-limit field of an OpenAI-compatible body (OpenAI's newer models refuse `max_tokens`). */
    maxTokensField: 'max_completion_tokens',
    cheapModels: [{ id: 'gpt-5.4-nano', label: 'GPT-5.4 Nano' }],
  },
  {
    id: 'google',
    name: 'Google Gemini',
    envVars: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'],
    shape: 'google',
    baseUrl: 'https://generativelanguage.googleapis.com/v1beta',
    cheapModels: [
      { id: 'gemini-2.5-flash-lite', label: 'gemini-2.5-flash-lite' },
      { id: 'gemini-3.1-flash-lite-preview', label: 'gemini-3.1-flash-lite-preview' },
    ],
  },
  {
    id: 'xai',
    name: 'xAI',
    envVars: ['XAI_API_KEY'],
    shape: 'openai-compatible',
    baseUrl: 'https://api.x.ai/v1',
    maxTokensField: 'max_completion_tokens',
    cheapModels: [
      { id: 'grok-4-1-fast-reasoning', label: 'grok-4-1-fast-reasoning' },
      { id: 'grok-4-1-fast-non-reasoning', label: 'grok-4-1-fast-non-reasoning' },
    ],
  },
  {
    id: 'openrouter',
    name: 'OpenRouter',
    envVars: ['OPENROUTER_API_KEY'],
    shape: 'openai-compatible',
    baseUrl: 'https://openrouter.ai/api/v1',
    maxTokensField: 'max_tokens',
    cheapModels: [
      { id: 'anthropic/claude-haiku-4.5', label: 'anthropic/claude-haiku-4.5' },
      { id: 'openai/gpt-5.4-nano', label: 'openai/gpt-5.4-nano' },
      { id: 'x-ai/grok-4.1-fast', label: 'x-ai/grok-4.1-fast' },
      { id: 'google/gemini-3.1-flash-lite-preview', label: 'google/gemini-3.1-flash-lite-preview' },
      { id: 'google/gemini-2.5-flash-lite', label: 'google/gemini-2.5-flash-lite' },
    ],
  },
] as const;

export type RenameProvider = (typeof RENAME_PROVIDERS)[number];
export type ProviderId = RenameProvider['id'];

/** The provider ids, in the list's order (a zod enum takes them as they are). */
export const PROVIDER_IDS = RENAME_PROVIDERS.map((p) => p.id) as [ProviderId, ...ProviderId[]];

/** Every provider's key variables, in the list's order. */
export const PROVIDER_KEY_VARS = RENAME_PROVIDERS.flatMap((p) => p.envVars) as RenameProvider['envVars'][number][];

export const isProviderId = (id: unknown): id is ProviderId => (PROVIDER_IDS as unknown[]).includes(id);
