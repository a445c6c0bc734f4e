/** Dispatch basics (§4.4, §5.11) in batched_sequential mode with short timings. */
import { describe, expect, it } from '@jest/globals';
import { configWith, dispatchApi, userItem } from './support.js';

const config = configWith({
  mode: 'batched_sequential',
  batchDebounceMs: 1000,
  typingGraceMs: 800,
  maxBatchWaitMs: 3000,
  // A back-off long enough that the claim right after a retryable failure is early on a loaded
  // machine too (with QUICK_RETRIES' 200 ms, the fail's answer and the next claim took longer).
  retryBaseMs: 1500,
  retryMaxMs: 1500,
  maxAttempts: 2,
});

const { api, d } = dispatchApi(config, { drainAfterEach: false });

const newChat = async () => (await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' })).body;
const say = (chatId: string, content: string) =>
  api.post(`/api/v1/chats/${chatId}/messages`, { role: 'user', content });

describe('dispatch', () => {
  it('answers 204 with no body when nothing is claimable within waitMs', async () => {
    const started = Date.now();
    const res = await api.post('/api/v1/dispatch/claim', { workerId: 'w1', waitMs: 1200 });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
  });

  it('merges rapid messages into one batch, claimable after the debounce; complete ends it', async () => {
    const chat = await newChat();
    const a = await say(chat.id, 'first');
    const b = await say(chat.id, 'second');
    const res = await api.post('/api/v1/dispatch/claim', { workerId: 'w1', waitMs: 5000 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      chatId: chat.id,
      kind: 'user_batch',
      agentIdHint: 'assistant',
      compiledContent: '[Message 1]\nfirst\n\n[Message 2]\nsecond',
      attachments: [],
    });
    expect(res.body.items.map((i: { sourceId: string }) => i.sourceId)).toEqual([a.body.id, b.body.id]);
    expect(res.body.items[0]).toEqual(userItem(a.body.id, 'first'));
    const done = await api.post(`/api/v1/dispatch/${res.body.batchId}/complete`, { workerId: 'w1' });
    expect(done.status).toBe(204);
    const again = await api.post(`/api/v1/dispatch/${res.body.batchId}/complete`, { workerId: 'w1' });
    expect(again.status).toBe(409);
    expect(again.body.error).toEqual({
      code: 'CONFLICT',
      message: 'Dispatch lease is no longer owned by this worker.',
      details: { batchId: res.body.batchId, workerId: 'w1' },
    });
    const unknown = await api.post('/api/v1/dispatch/AAAAAAAAAAAAAAAAAAAAA/complete', { workerId: 'w1' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toEqual({ code: 'NOT_FOUND', message: 'Dispatch batch not found.', details: null });
  });

  it(
    'retries a retryable failure after the backoff, and the last attempt fails for good with the system ' + 'message',
    async () => {
      const chat = await newChat();
      await say(chat.id, 'do it');
      const first = await api.post('/api/v1/dispatch/claim', { workerId: 'w1', waitMs: 5000 });
      expect(first.status).toBe(200);
      const failed = await api.post(`/api/v1/dispatch/${first.body.batchId}/fail`, {
        workerId: 'w1',
        reason: ' boom ',
        retryable: true,
      });
      expect(failed.status).toBe(204);
      const early = await api.post('/api/v1/dispatch/claim', { workerId: 'w2', waitMs: 0 });
      expect(early.status).toBe(204);
      const second = await api.post('/api/v1/dispatch/claim', { workerId: 'w2', waitMs: 5000 });
      expect(second.status).toBe(200);
      expect(second.body.batchId).toBe(first.body.batchId);
      const terminal = await api.post(`/api/v1/dispatch/${second.body.batchId}/fail`, {
        workerId: 'w2',
        reason: 'still broken',
        retryable: true,
      });
      expect(terminal.status).toBe(204);
      await d.expectFailureMessage(chat.id, 'Dispatch failed after 2 attempts: still broken');
    },
  );
});
