import { beforeAll, describe, expect, it } from '@jest/globals';
import { newChat, useApi } from '../../support/api.js';

const api = useApi();
beforeAll(async () => {
  await api.post('/api/v1/chats', newChat({ tags: ['alpha', 'alpine', 'Alps', 'beta', '100%_off', 'a\\b'] }));
  await api.post('/api/v1/chats', newChat({ tags: ['alpha', 'ALPHA'] }));
  for (let i = 0; i < 60; i++)
    await api.post('/api/v1/chats', newChat({ tags: [`many-${String(i).padStart(2, '0')}`] }));
});

const suggest = async (query: string) => api.get(`/api/v1/tags/suggestions${query}`);

describe('GET /api/v1/tags/suggestions', () => {
  it('orders prefix matches by usage desc, then name asc, honouring limit', async () => {
    const res = await suggest('?q=al&limit=2');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: [
        { name: 'alpha', usage_count: 2 },
        { name: 'ALPHA', usage_count: 1 },
      ],
    });
  });

  it('matches ASCII letters case-insensitively and keeps exact names distinct', async () => {
    const res = await suggest('?q=AL');
    expect(res.body.data).toEqual([
      { name: 'alpha', usage_count: 2 },
      { name: 'ALPHA', usage_count: 1 },
      { name: 'Alps', usage_count: 1 },
      { name: 'alpine', usage_count: 1 },
    ]);
  });

  it('treats %, _ and \\ literally and trims q', async () => {
    expect((await suggest(`?q=${encodeURIComponent(' 100%_ ')}`)).body.data).toEqual([
      { name: '100%_off', usage_count: 1 },
    ]);
    expect((await suggest(`?q=${encodeURIComponent('a\\')}`)).body.data).toEqual([{ name: 'a\\b', usage_count: 1 }]);
    expect((await suggest('?q=%25')).body.data).toEqual([]);
  });

  it('returns [] for a missing, empty or blank q', async () => {
    for (const q of ['', '?q=', '?q=%20%20']) expect((await suggest(q)).body).toEqual({ data: [] });
  });

  it('defaults to 10 entries and honours limits up to 100', async () => {
    expect((await suggest('?q=many')).body.data).toHaveLength(10);
    const sixty = (await suggest('?q=many&limit=100')).body.data;
    expect(sixty).toHaveLength(60);
    expect(sixty[0]).toEqual({ name: 'many-00', usage_count: 1 });
  });

  it.each(['0', '101', 'x'])('rejects limit=%s', async (limit) => {
    const res = await suggest(`?q=a&limit=${limit}`);
    expect(res.status).toBe(400);
    expect(res.body.error.details.fieldErrors).toHaveProperty('limit');
  });
});
