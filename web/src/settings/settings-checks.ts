/**
 * The settings form in the person's words (issue 33 item 16): what the form checks before anything
 * is sent (an empty agent ID, model ID or webhook URL, a number that is not one, a headers line it
 * cannot read), each problem at its field, and the service's configuration messages
 * (`Config validation error: agents.0.id: Too small: expected string to have >=1 characters`, or a
 * rule such as `push.subject must not contain localhost.`) said the same way when one comes back
 * anyway (another client's rules, an older app).
 */

/** What the checks read of the form's draft (settings/settings.ts Draft; no import, so the unit tests' compile reads this file alone). */
export interface CheckedDraft {
  agents: readonly { id: string }[];
  models: readonly { id: string }[];
  autoRename: { enabled: boolean; modelId: string };
  hooks: readonly { url: string; timeoutMs: string; maxRetries: string; newHeaders: string }[];
}

export interface FieldProblem {
  /** The dotted path of the field (`agents.0.id`), as the form's input ids name them. */
  path: string;
  message: string;
}

/** What a field is called in a message, from its path (`agents.0.id` → "Agent ID"). */
export function fieldLabel(path: string): string {
  const [section, , field, , sub] = path.split('.');
  const owner = { agents: 'Agent', models: 'Model', hooks: 'Webhook' }[section ?? ''];
  const names: Record<string, string> = {
    id: 'ID',
    name: 'name',
    description: 'description',
    url: 'URL',
    avatarUrl: 'avatar URL',
    defaultModelId: 'default model',
    timeoutMs: 'timeout',
    maxRetries: 'max retries',
    events: 'events',
    headers: 'headers',
    signingSecret: 'signing secret',
    metadata: sub === 'name' ? 'metadata key' : 'metadata value',
  };
  if (owner && field) return `${owner} ${names[field] ?? field}`;
  const top: Record<string, string> = {
    'push.subject': 'Push subject',
    'push.enabled': 'Push',
    'autoRename.modelId': 'Auto-rename model',
    'autoRename.provider': 'Auto-rename provider',
    'autoRename.apiKey': 'API key',
    defaultModelIdForNewChats: 'Default model for new chats',
  };
  return top[path] ?? path;
}

/** A hook's headers as typed, or the path and message of the first line that is not `Name: value`. */
export function parseHeaders(text: string): Record<string, string> | { line: number; message: string } {
  const headers: Record<string, string> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    const colon = line.indexOf(':');
    if (colon <= 0) return { line: i + 1, message: `Line ${i + 1} is not "Name: value".` };
    headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return headers;
}

const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

const isCount = (text: string, min: number) => {
  const t = text.trim();
  return /^-?\d+$/.test(t) && Number(t) >= min;
};

/** Every problem the form can see itself, in the order of the fields on the screen. */
export function checkDraft(draft: CheckedDraft): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (draft.agents.length === 0) problems.push({ path: 'agents', message: 'Keep at least one agent.' });
  draft.agents.forEach((agent, i) => {
    if (!agent.id.trim()) problems.push({ path: `agents.${i}.id`, message: 'Agent ID cannot be empty.' });
  });
  if (draft.models.length === 0) problems.push({ path: 'models', message: 'Keep at least one model.' });
  draft.models.forEach((model, i) => {
    if (!model.id.trim()) problems.push({ path: `models.${i}.id`, message: 'Model ID cannot be empty.' });
  });
  const rename = draft.autoRename;
  if (rename.enabled && !rename.modelId.trim()) {
    problems.push({ path: 'autoRename.modelId', message: 'Auto-rename needs a model: type one or pick a suggestion.' });
  }
  draft.hooks.forEach((hook, i) => {
    if (!hook.url.trim()) problems.push({ path: `hooks.${i}.url`, message: 'Webhook URL cannot be empty.' });
    if (hook.timeoutMs.trim() && !isCount(hook.timeoutMs, 1)) {
      problems.push({
        path: `hooks.${i}.timeoutMs`,
        message: 'Timeout must be a whole number of milliseconds, 1 or more.',
      });
    }
    if (hook.maxRetries.trim() && !isCount(hook.maxRetries, 0)) {
      problems.push({ path: `hooks.${i}.maxRetries`, message: 'Max retries must be a whole number, 0 or more.' });
    }
    if (hook.newHeaders.trim()) {
      const parsed = parseHeaders(hook.newHeaders);
      if ('line' in parsed) problems.push({ path: `hooks.${i}.headers`, message: parsed.message });
    }
  });
  return problems;
}

/** The service's cross-field rules (§12.3), in the person's words. */
const RULES: [RegExp, string][] = [
  [/^at least one model is required/, 'Keep at least one model.'],
  [/^at least one agent is required/, 'Keep at least one agent.'],
  [/^defaultModelIdForNewChats must match/, 'Choose one of the models listed above.'],
  [/^agent ".*" defaultModelId must match/, 'Choose one of the models listed above.'],
  [/^push\.enabled requires/, 'Push notifications need a subject (a mailto: or https: address).'],
  [/^push\.subject must not contain localhost/, 'The subject cannot contain localhost: push services refuse it.'],
  [/^autoRename\.provider must be one of/, 'Choose a provider from the list.'],
  [/^autoRename\.modelId must be/, 'Auto-rename needs a model: type one or pick a suggestion.'],
  [/^security\.instanceSecret is required/, 'Type a new instance secret (or Generate one) before requiring it.'],
];

/**
 * A 400's message from PATCH /config/admin for the field at `path` (when it names one), said in the
 * person's words: `agents.0.id: Too small: expected string to have >=1 characters` → "Agent ID
 * cannot be empty."; a rule the form knows gets its sentence; anything else loses the
 * `Config validation error:` prefix and the path (the message sits at that field).
 */
export function humanMessage(message: string, path?: string): string {
  const rule = message.replace(/^Config validation error:\s*/, '');
  for (const [pattern, text] of RULES) if (pattern.test(rule)) return text;
  const issue = /^([A-Za-z0-9_.]+): (.*)$/.exec(rule);
  if (!issue) return capitalized(rule);
  const [, named, detail] = issue as unknown as [string, string, string];
  const label = fieldLabel(path ?? named);
  if (/^Too small: expected string/.test(detail)) return `${label} cannot be empty.`;
  const atLeast = /^Too small: expected number to be >=\s*(-?\d+)/.exec(detail);
  if (atLeast) return `${label} must be ${atLeast[1]} or more.`;
  if (/expected int/.test(detail)) return `${label} must be a whole number.`;
  if (/expected number/.test(detail)) return `${label} must be a number.`;
  if (/expected string/.test(detail)) return `${label} must be text.`;
  return `${label}: ${detail}`;
}
