/**
 * The settings form in the person's words (issue 33 item 16): the form's own checks before a save,
 * and the service's configuration messages said at their field without the validator's wording.
 */
import { describe, expect, it } from '@jest/globals';
import { checkDraft, humanMessage } from '../../web/src/settings/settings-checks.js';
import type { CheckedDraft } from '../../web/src/settings/settings-checks.js';

type Hook = CheckedDraft['hooks'][number];
interface Draft extends CheckedDraft {
  hooks: Hook[];
}

const draft = (patch: Partial<Draft> = {}): Draft => ({
  agents: [{ id: 'assistant' }],
  models: [{ id: 'model-a' }],
  autoRename: { enabled: false, modelId: '' },
  hooks: [],
  ...patch,
});

const hook = (patch: Partial<Hook>): Hook => ({
  url: 'https://hooks.example.com/x',
  timeoutMs: '5000',
  maxRetries: '3',
  newHeaders: '',
  ...patch,
});

describe('checkDraft (before anything is sent)', () => {
  it('passes a valid configuration', () => {
    expect(checkDraft(draft())).toEqual([]);
  });

  it('names every empty ID and URL, each at its field, in screen order', () => {
    const base = draft();
    const problems = checkDraft({
      ...base,
      agents: [...base.agents, { id: '  ' }],
      models: [{ ...base.models[0]!, id: '' }],
      hooks: [hook({ url: '', timeoutMs: '0', maxRetries: 'x', newHeaders: 'X-Ok: 1\nbroken' })],
    });
    expect(problems).toEqual([
      { path: 'agents.1.id', message: 'Agent ID cannot be empty.' },
      { path: 'models.0.id', message: 'Model ID cannot be empty.' },
      { path: 'hooks.0.url', message: 'Webhook URL cannot be empty.' },
      { path: 'hooks.0.timeoutMs', message: 'Timeout must be a whole number of milliseconds, 1 or more.' },
      { path: 'hooks.0.maxRetries', message: 'Max retries must be a whole number, 0 or more.' },
      { path: 'hooks.0.headers', message: 'Line 2 is not "Name: value".' },
    ]);
  });

  it('asks for at least one agent and one model, and a model for auto-rename when it is on', () => {
    expect(
      checkDraft(draft({ agents: [], models: [], autoRename: { ...draft().autoRename, enabled: true } })).map(
        (p) => p.path,
      ),
    ).toEqual(['agents', 'models', 'autoRename.modelId']);
  });
});

describe('humanMessage (a refused save, at its field)', () => {
  it.each([
    [
      'Config validation error: agents.0.id: Too small: expected string to have >=1 characters',
      'Agent ID cannot be empty.',
    ],
    [
      'Config validation error: models.2.id: Too small: expected string to have >=1 characters',
      'Model ID cannot be empty.',
    ],
    [
      'Config validation error: hooks.0.url: Too small: expected string to have >=1 characters',
      'Webhook URL cannot be empty.',
    ],
    [
      'Config validation error: hooks.1.timeoutMs: Too small: expected number to be >=1',
      'Webhook timeout must be 1 or more.',
    ],
    [
      'Config validation error: hooks.1.maxRetries: Invalid input: expected number, received string',
      'Webhook max retries must be a number.',
    ],
    [
      'Config validation error: push.subject must not contain localhost.',
      'The subject cannot contain localhost: push services refuse it.',
    ],
    [
      'Config validation error: agent "writer" defaultModelId must match a configured model id.',
      'Choose one of the models listed above.',
    ],
    ['Config validation error: at least one agent is required.', 'Keep at least one agent.'],
    [
      'Config validation error: the configuration exceeds 350000 bytes of JSON.',
      'The configuration exceeds 350000 bytes of JSON.',
    ],
  ])('%j → %j', (message, human) => {
    expect(humanMessage(message)).toBe(human);
  });
});
