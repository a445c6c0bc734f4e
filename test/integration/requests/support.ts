/**
 * Shared helpers for the interactive request tests (contract §2.3, §5.5). Each test file
 * starts its own API through `requestsApi`.
 */
import { expect } from '@jest/globals';
import { eventsSince, readEvents } from '../../support/events.js';
import { dispatchInputs as storedInputs } from '../../support/table.js';
import { useApi } from '../../support/api.js';
import type { RequestOptions, TestApi } from '../../support/api.js';

export const config = {
  agents: [
    { id: 'assistant', name: 'Assistant', description: '' },
    { id: 'coder', name: 'Coder', description: '' },
  ],
  models: [{ id: 'model-a', name: 'A', description: '' }],
  // These tests read the dispatch inputs a resolution writes; sealing (which consumes them into
  // a batch) is held off for the file's lifetime. Dispatch itself is tested in test/integration/dispatch.
  server: { dispatch: { mode: 'batched_sequential', batchDebounceMs: 3_600_000, maxBatchWaitMs: 3_600_000 } },
};

export const choiceBody = (extra: Record<string, unknown> = {}) => ({
  type: 'choice',
  title: 'Approve deploy?',
  config: {
    options: [
      { id: 'yes', label: 'Yes', variant: 'primary' },
      { id: 'no', label: 'No' },
      { id: 'later', label: 'Later' },
    ],
  },
  ...extra,
});
export const textBody = (extra: Record<string, unknown> = {}) => ({
  type: 'text_input',
  title: 'Your name?',
  config: { placeholder: 'Name', validation: { minLength: 2, maxLength: 10 } },
  ...extra,
});
export const formBody = (extra: Record<string, unknown> = {}) => ({
  type: 'form',
  title: 'Details',
  config: {
    fields: [
      { name: 'email', type: 'text', required: true },
      { name: 'color', type: 'select', options: ['red', 'green'] },
      { name: 'tags', type: 'multiselect', options: ['x', 'y'] },
      { name: 'agree', type: 'checkbox', required: true },
    ],
    submitLabel: 'Send',
  },
  ...extra,
});

/** The test file's API (started before its tests, closed after them) and the helpers over it. */
export function requestsApi() {
  const api = useApi({ config });
  return { api, h: helpers(api) };
}

export function helpers(api: TestApi) {
  const newChat = async (): Promise<any> => {
    const res = await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'model-a' });
    expect(res.status).toBe(201);
    return res.body;
  };
  const getChat = async (chatId: string): Promise<any> => {
    const res = await api.get(`/api/v1/chats/${chatId}`);
    expect(res.status).toBe(200);
    return res.body;
  };
  const post = (chatId: string, body: unknown, options?: RequestOptions) =>
    api.post(`/api/v1/chats/${chatId}/requests`, body, options);
  const create = async (chatId: string, body: unknown = choiceBody()): Promise<any> => {
    const res = await post(chatId, body);
    expect([res.status, res.body?.error]).toEqual([201, undefined]);
    return res.body;
  };
  const list = async (chatId: string, status = 'all'): Promise<any[]> => {
    const res = await api.get(`/api/v1/chats/${chatId}/requests?status=${status}`);
    expect(res.status).toBe(200);
    return res.body.data;
  };
  const find = async (chatId: string, requestId: string): Promise<any> =>
    (await list(chatId)).find((r) => r.id === requestId);
  const resolve = (requestId: string, body?: unknown) => api.post(`/api/v1/requests/${requestId}/resolve`, body);
  const cancel = (requestId: string) => api.post(`/api/v1/requests/${requestId}/cancel`);
  const patch = (requestId: string, body?: unknown) => api.patch(`/api/v1/requests/${requestId}`, body);
  const pendingTotal = async (query = ''): Promise<number> => {
    const res = await api.get(`/api/v1/chats/pending-summary${query}`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['pending_requests_total']);
    return res.body.pending_requests_total;
  };
  /** The dispatch inputs stored in a chat's partition (§4.4.1), oldest first. */
  const dispatchInputs = (chatId: string) => storedInputs(api.tableName, chatId);
  const eventCount = async () => (await readEvents(api.tableName)).length;

  /** Everything a failed operation must leave alone: the chat, its requests, its dispatch inputs and the event log. */
  const snapshot = async (chatId: string) => ({
    chat: await getChat(chatId),
    requests: await list(chatId),
    inputs: await dispatchInputs(chatId),
    events: await eventCount(),
  });
  const expectUnchanged = async (chatId: string, before: Awaited<ReturnType<typeof snapshot>>) => {
    expect(await getChat(chatId)).toEqual(before.chat);
    expect(await list(chatId)).toEqual(before.requests);
    expect(await dispatchInputs(chatId)).toEqual(before.inputs);
    expect(await eventsSince(api.tableName, before.events)).toEqual([]);
  };

  return {
    newChat,
    getChat,
    post,
    create,
    list,
    find,
    resolve,
    cancel,
    patch,
    pendingTotal,
    dispatchInputs,
    eventCount,
    snapshot,
    expectUnchanged,
  };
}

/** A 400 rule error as §1.7 spells it. */
export const ruleError = (message: string, details: Record<string, unknown> | null) => ({
  code: 'VALIDATION_ERROR',
  message,
  details,
});

/** The 404 of a request id that names no request. */
export function expectRequestNotFound(res: { status: number; body: any }, requestId: string) {
  expect([res.status, res.body.error]).toEqual([
    404,
    { code: 'NOT_FOUND', message: 'Request not found.', details: { requestId } },
  ]);
}

/** A schema error (§1.8) naming `field`. */
export function expectSchemaError(res: { status: number; body: any }, field: string) {
  expect([res.status, res.body?.error?.code, res.body?.error?.message]).toEqual([
    400,
    'VALIDATION_ERROR',
    'Request validation failed.',
  ]);
  expect(Array.isArray(res.body.error.details.formErrors)).toBe(true);
  expect(Object.keys(res.body.error.details.fieldErrors)).toEqual(expect.arrayContaining([field]));
}
