import { describe, expect, it } from '@jest/globals';
import { configOf, useApi } from '../../support/api.js';

const fresh = useApi({ config: configOf(['alpha', 'beta'], ['m']) });

describe('GET /api/v1/chats/unread-summary and /pending-summary', () => {
  it('start empty', async () => {
    expect((await fresh.get('/api/v1/chats/unread-summary')).body).toEqual({ total_unread: 0, unread_by_agent: {} });
    expect((await fresh.get('/api/v1/chats/pending-summary')).body).toEqual({ pending_requests_total: 0 });
  });

  it('sums unread counts per agent, counts a multi-agent chat toward each, and filters by archived', async () => {
    const mk = async (agentIds: string[]) =>
      (await fresh.post('/api/v1/chats', { agentIds, modelId: 'm' })).body.id as string;
    const a = await mk(['alpha']);
    const ab = await mk(['alpha', 'beta', 'alpha']);
    const b = await mk(['beta']);
    await mk(['beta']); // stays read: contributes nothing
    for (const id of [a, ab, b]) await fresh.post(`/api/v1/chats/${id}/mark-unread`);
    await fresh.post(`/api/v1/chats/${b}/archive`);
    expect((await fresh.get('/api/v1/chats/unread-summary')).body).toEqual({
      total_unread: 3,
      unread_by_agent: { alpha: 2, beta: 2 },
    });
    expect((await fresh.get('/api/v1/chats/unread-summary?archived=false')).body).toEqual({
      total_unread: 2,
      unread_by_agent: { alpha: 2, beta: 1 },
    });
    expect((await fresh.get('/api/v1/chats/unread-summary?archived=true')).body).toEqual({
      total_unread: 1,
      unread_by_agent: { beta: 1 },
    });
    await fresh.post(`/api/v1/chats/${ab}/mark-read`);
    expect((await fresh.get('/api/v1/chats/unread-summary')).body).toEqual({
      total_unread: 2,
      unread_by_agent: { alpha: 1, beta: 1 },
    });
    expect((await fresh.get('/api/v1/chats/pending-summary?archived=true')).body).toEqual({
      pending_requests_total: 0,
    });
    const bad = await fresh.get('/api/v1/chats/unread-summary?archived=maybe');
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.fieldErrors).toHaveProperty('archived');
  });
});
