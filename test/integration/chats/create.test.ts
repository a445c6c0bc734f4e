import { describe, expect, it } from '@jest/globals';
import { twoAgentConfig, useApi } from '../../support/api.js';
import { CHAT_KEYS, ISO, createdWith } from '../../support/shapes.js';

const config = { titleMaxChars: 20, ...twoAgentConfig };
const body = (o: Record<string, unknown> = {}) => ({ agentIds: ['assistant'], modelId: 'model-a', ...o });

const api = useApi({ config });

describe('POST /api/v1/chats', () => {
  it('creates a chat with every field present and the contract defaults', async () => {
    const res = await api.post(
      '/api/v1/chats',
      body({ title: '  Quarterly report  ', tags: [' work', 'finance', 'work', ''] }),
    );
    const chat = createdWith(res, CHAT_KEYS);
    expect(chat).toMatchObject({
      is_archived: false,
      title: 'Quarterly report',
      title_source: 'manual',
      tags: ['work', 'finance'],
      pinned: false,
      agent_ids: ['assistant'],
      model_id: 'model-a',
      last_message_preview: null,
      last_message_role: null,
      pending_requests_count: 0,
      unread_count: 0,
      notifications_muted: false,
      last_message_at: null,
    });
    expect(chat.created_at).toMatch(ISO);
    expect(chat.updated_at).toBe(chat.created_at);
    expect(chat.last_read_at).toBe(chat.created_at);
    expect((await api.get(`/api/v1/chats/${chat.id}`)).body).toEqual(chat);
  });

  it('derives the title from the first message, collapses whitespace and cuts it to titleMaxChars', async () => {
    const res = await api.post(
      '/api/v1/chats',
      body({ firstMessage: '  Hello\n\n  there,   this is a long first message  ' }),
    );
    expect(res.status).toBe(201);
    expect(res.body.title).toBe('Hello there, this is');
    expect(res.body.title_source).toBe('default');
    expect(res.body.last_message_preview).toBe('Hello\n\n  there,   this is a long first message');
    expect(res.body.last_message_role).toBe('user');
    expect(res.body.last_message_at).toBe(res.body.created_at);
    expect(res.body.unread_count).toBe(0);
  });

  it('falls back to "New Chat" without a usable first message', async () => {
    expect((await api.post('/api/v1/chats', body())).body.title).toBe('New Chat');
    const blank = await api.post('/api/v1/chats', body({ firstMessage: '   ' }));
    expect(blank.body.title).toBe('New Chat');
    expect(blank.body.last_message_preview).toBeNull();
  });

  it('cuts a manual title to titleMaxChars and keeps duplicate agent ids in order', async () => {
    const res = await api.post(
      '/api/v1/chats',
      body({ title: 'x'.repeat(30), agentIds: ['coder', 'assistant', 'coder'] }),
    );
    expect(res.body.title).toBe('x'.repeat(20));
    expect(res.body.agent_ids).toEqual(['coder', 'assistant', 'coder']);
  });

  it('rejects shape errors with fieldErrors naming each field, and creates nothing', async () => {
    const before = (await api.get('/api/v1/chats?limit=100')).body.data.length;
    const cases: [unknown, string][] = [
      [{ modelId: 'model-a' }, 'agentIds'],
      [{ agentIds: [], modelId: 'model-a' }, 'agentIds'],
      [{ agentIds: 'assistant', modelId: 'model-a' }, 'agentIds'],
      [body({ modelId: null }), 'modelId'],
      [body({ title: 5 }), 'title'],
      [body({ tags: 'a' }), 'tags'],
      [body({ firstMessage: false }), 'firstMessage'],
    ];
    for (const [payload, field] of cases) {
      const res = await api.post('/api/v1/chats', payload);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.message).toBe('Request validation failed.');
      expect(res.body.error.details.fieldErrors).toHaveProperty(field);
      expect(Array.isArray(res.body.error.details.formErrors)).toBe(true);
    }
    expect((await api.get('/api/v1/chats?limit=100')).body.data.length).toBe(before);
  });

  it('rejects a body that is not an object, and malformed JSON', async () => {
    for (const raw of ['null', '[1]', '"x"', '3']) {
      const res = await api.request('POST', '/api/v1/chats', undefined, { raw });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details.formErrors.length).toBeGreaterThan(0);
    }
    const bad = await api.request('POST', '/api/v1/chats', undefined, { raw: '{"agentIds": [' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toEqual({
      code: 'VALIDATION_ERROR',
      message: 'Malformed JSON in request body',
      details: null,
    });
  });

  it('validates a body sent without a JSON content type as {}', async () => {
    const res = await api.request('POST', '/api/v1/chats', undefined, {
      raw: JSON.stringify(body()),
      contentType: 'text/plain',
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details.fieldErrors).toHaveProperty('agentIds');
    // modelId is optional (§5.3.1, since 2026-11): only agentIds is missing.
    expect(Object.keys(res.body.error.details.fieldErrors)).toEqual(['agentIds']);
  });

  it('applies the rule checks in the contract order with their exact messages', async () => {
    const cases: [Record<string, unknown>, string, Record<string, unknown>][] = [
      [
        body({ modelId: 'nope', agentIds: ['ghost'], title: ' ' }),
        'modelId must match a configured model id.',
        { field: 'modelId' },
      ],
      [
        body({ agentIds: ['assistant', 'ghost', 'ghost2'], title: ' ' }),
        'agentIds contains unknown id.',
        { field: 'agentIds', agentId: 'ghost' },
      ],
      [body({ title: '   ' }), 'title cannot be empty.', { field: 'title' }],
    ];
    for (const [payload, message, details] of cases) {
      const res = await api.post('/api/v1/chats', payload);
      expect(res.status).toBe(400);
      expect(res.body.error).toEqual({ code: 'VALIDATION_ERROR', message, details });
    }
  });

  it('ignores unknown body fields', async () => {
    const res = await api.post('/api/v1/chats', body({ surprise: true, id: 'forced-id' }));
    expect(res.status).toBe(201);
    expect(res.body.id).not.toBe('forced-id');
    expect(res.body).not.toHaveProperty('surprise');
  });
});
