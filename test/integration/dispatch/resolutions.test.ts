/**
 * Request resolutions as dispatch inputs (contract §4.4.1, §4.4.8, §2.5) in batched_sequential
 * mode: the rendered line per request type, the sender, `request_batch` versus `user_batch`,
 * and no input for request creation or cancellation.
 */
import { describe, expect, it } from '@jest/globals';
import { batchedConfig, blocks, dispatchApi, userItem } from './support.js';

const DEBOUNCE = 600;
const config = batchedConfig(DEBOUNCE);

const { api, d } = dispatchApi(config);
const W = 'worker-1';

async function newRequest(chatId: string, body: Record<string, unknown>): Promise<string> {
  const res = await api.post(`/api/v1/chats/${chatId}/requests`, body);
  expect(res.status).toBe(201);
  return res.body.id as string;
}

async function resolve(requestId: string, body: Record<string, unknown>): Promise<void> {
  const res = await api.post(`/api/v1/requests/${requestId}/resolve`, body);
  expect(res.status).toBe(200);
}

const choice = (title: string, config: Record<string, unknown> = {}) => ({
  type: 'choice',
  title,
  config: {
    options: [
      { id: 'yes', label: 'Yes' },
      { id: 'no', label: 'No' },
      { id: 'later', label: 'Later' },
    ],
    ...config,
  },
});

const resolution = (requestId: string, senderId: string, content: string) => ({
  inputId: expect.any(String),
  sourceKind: 'request_resolved',
  sourceId: requestId,
  senderId,
  content,
  mediaIds: [],
  attachmentNames: [],
});

describe('request resolutions', () => {
  it(
    'renders a choice: the selected ids in submitted order, joined by ", "; a batch of resolutions only is a ' +
      'request_batch',
    async () => {
      const chat = await d.newChat();
      const req = await newRequest(chat.id, choice('Approve deploy?', { maxSelections: 3 }));
      await resolve(req, { selectedOptionIds: ['later', 'yes'] });
      const batch = await d.claimOne({ workerId: W, waitMs: DEBOUNCE + 4000 });
      const line = '[Request resolved: "Approve deploy?"] Selected: later, yes';
      expect(batch).toEqual({
        batchId: expect.any(String),
        chatId: chat.id,
        kind: 'request_batch',
        agentIdHint: 'assistant',
        compiledContent: line,
        items: [resolution(req, 'user:primary', line)],
        attachments: [],
      });
      expect('traceKind' in batch.items[0]!).toBe(false);
      await d.completeOk(batch.batchId, W);
    },
  );

  it('renders a text_input with the trimmed text; resolvedBy backend gives senderId backend', async () => {
    const chat = await d.newChat();
    const req = await newRequest(chat.id, { type: 'text_input', title: 'Your name', config: {} });
    await resolve(req, { text: '  Ada Lovelace  ', resolvedBy: 'backend' });
    const batch = await d.claimOne({ workerId: W, waitMs: DEBOUNCE + 4000 });
    const line = '[Request resolved: "Your name"] Response: Ada Lovelace';
    expect(batch).toMatchObject({ kind: 'request_batch', compiledContent: line });
    expect(batch.items).toEqual([resolution(req, 'backend', line)]);
    await d.completeOk(batch.batchId, W);
  });

  it('renders a form as compact JSON with the keys in submitted order', async () => {
    const chat = await d.newChat();
    const req = await newRequest(chat.id, {
      type: 'form',
      title: 'Deploy settings',
      config: {
        fields: [
          { name: 'env', type: 'select', options: ['prod', 'dev'] },
          { name: 'confirm', type: 'checkbox' },
          { name: 'tags', type: 'multiselect', options: ['a', 'b'] },
          { name: 'note', type: 'text' },
        ],
      },
    });
    await resolve(req, { values: { tags: ['b', 'a'], note: 'ship it', env: 'prod', confirm: true } });
    const batch = await d.claimOne({ workerId: W, waitMs: DEBOUNCE + 4000 });
    const line =
      '[Request resolved: "Deploy settings"] Form values: {"tags":["b","a"],"note":"ship ' +
      'it","env":"prod","confirm":true}';
    expect(batch).toMatchObject({ kind: 'request_batch', compiledContent: line });
    expect(batch.items).toEqual([resolution(req, 'user:primary', line)]);
    await d.completeOk(batch.batchId, W);
  });

  it('inserts the title verbatim and renders an empty selection', async () => {
    const chat = await d.newChat();
    const quoted = await newRequest(chat.id, choice('Pick "one" \\ or not'));
    const optional = await newRequest(chat.id, choice('Anything?', { minSelections: 0 }));
    await resolve(quoted, { selectedOptionIds: ['no'] });
    await resolve(optional, { selectedOptionIds: [] });
    const batch = await d.claimOne({ workerId: W, waitMs: DEBOUNCE + 4000 });
    const lines = [
      '[Request resolved: "Pick "one" \\ or not"] Selected: no',
      '[Request resolved: "Anything?"] Selected: ',
    ];
    expect(batch.kind).toBe('request_batch');
    expect(batch.items).toEqual([
      resolution(quoted, 'user:primary', lines[0]!),
      resolution(optional, 'user:primary', lines[1]!),
    ]);
    expect(batch.compiledContent).toBe(blocks(lines));
    await d.completeOk(batch.batchId, W);
  });

  it(
    'merges several resolutions into one request_batch, and a user message with a resolution into a ' + 'user_batch',
    async () => {
      const chat = await d.newChat();
      const r1 = await newRequest(chat.id, choice('First'));
      const r2 = await newRequest(chat.id, { type: 'text_input', title: 'Second', config: {} });
      await resolve(r1, { selectedOptionIds: ['yes'] });
      await resolve(r2, { text: 'fine', resolvedBy: 'backend' });
      const both = await d.claimOne({ workerId: W, waitMs: DEBOUNCE + 4000 });
      const lines = ['[Request resolved: "First"] Selected: yes', '[Request resolved: "Second"] Response: fine'];
      expect(both.kind).toBe('request_batch');
      expect(both.items).toEqual([resolution(r1, 'user:primary', lines[0]!), resolution(r2, 'backend', lines[1]!)]);
      expect(both.compiledContent).toBe(blocks(lines));
      await d.completeOk(both.batchId, W);

      const r3 = await newRequest(chat.id, choice('Third'));
      const msg = await d.say(chat.id, 'also this', { trace: { kind: 'file' } });
      await resolve(r3, { selectedOptionIds: ['no'] });
      const mixed = await d.claimOne({ workerId: W, waitMs: DEBOUNCE + 4000 });
      const line3 = '[Request resolved: "Third"] Selected: no';
      expect(mixed.kind).toBe('user_batch');
      expect(mixed.items).toEqual([
        userItem(msg, 'also this', { traceKind: 'file' }),
        resolution(r3, 'user:primary', line3),
      ]);
      expect('traceKind' in mixed.items[1]!).toBe(false);
      expect(mixed.compiledContent).toBe(blocks(['also this', line3]));
      await d.completeOk(mixed.batchId, W);
    },
  );

  it('creates no input for creating or cancelling a request', async () => {
    const chat = await d.newChat();
    const req = await newRequest(chat.id, choice('Never mind'));
    expect((await api.post(`/api/v1/requests/${req}/cancel`)).status).toBe(200);
    await d.claimNone({ workerId: W, waitMs: DEBOUNCE + 1500 });
  });
});
