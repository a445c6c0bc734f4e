import { createHmac, randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { Keys } from '../../../functions/store/keys.js';
import { useApi } from '../../support/api.js';

const config = {
  agents: [
    { id: 'alpha', name: 'Alpha', description: '' },
    { id: 'beta', name: 'Beta', description: '' },
  ],
  models: [{ id: 'm', name: 'M', description: '' }],
};

interface Chat {
  id: string;
  title: string;
  tags: string[];
  agent_ids: string[];
  pinned: boolean;
  is_archived: boolean;
  last_message_at: string | null;
}

const api = useApi({ config });
const all: Chat[] = [];

beforeAll(async () => {
  // 250 chats: every 3rd has a first message (so last_message_at is set), every 5th is tagged
  // "red", every 4th has agent beta, every 7th is archived, every 11th is pinned.
  for (let batch = 0; batch < 25; batch++) {
    const created = await Promise.all(
      Array.from({ length: 10 }, (_, j) => {
        const i = batch * 10 + j;
        return api.post('/api/v1/chats', {
          agentIds: i % 4 === 0 ? ['alpha', 'beta'] : ['alpha'],
          modelId: 'm',
          title: i % 6 === 0 ? `Report ${i}` : `Chat ${i}`,
          tags: i % 5 === 0 ? ['red', 'x'] : ['x'],
          ...(i % 3 === 0 ? { firstMessage: `message ${i}` } : {}),
        });
      }),
    );
    all.push(...created.map((r) => r.body as Chat));
  }
  await Promise.all(all.filter((_, i) => i % 7 === 0).map((c) => api.post(`/api/v1/chats/${c.id}/archive`)));
  await Promise.all(
    all.filter((_, i) => i % 11 === 0).map((c) => api.patch(`/api/v1/chats/${c.id}`, { pinned: true })),
  );
  for (const [i, c] of all.entries()) {
    c.is_archived = i % 7 === 0;
    c.pinned = i % 11 === 0;
  }
}, 120_000);

/** The contract order: pinned desc, last_message_at desc (null = 0), id desc. */
function expectedOrder(chats: Chat[]): string[] {
  const key = (c: Chat) => [c.pinned ? 1 : 0, c.last_message_at ? Date.parse(c.last_message_at) : 0] as const;
  return [...chats]
    .sort((a, b) => {
      const [pa, ta] = key(a);
      const [pb, tb] = key(b);
      return pb - pa || tb - ta || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
    })
    .map((c) => c.id);
}

async function walk(query: string, limit: number): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res: { status: number; body: any } = await api.get(
      `/api/v1/chats?limit=${limit}${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    expect(res.status).toBe(200);
    pages++;
    expect(res.body.data.length).toBeLessThanOrEqual(limit);
    if (res.body.cursor.hasMore) {
      expect(typeof res.body.cursor.next).toBe('string');
      expect(res.body.data.length).toBe(limit);
    } else {
      expect(res.body.cursor.next).toBeNull();
    }
    ids.push(...res.body.data.map((c: Chat) => c.id));
    cursor = res.body.cursor.next;
  } while (cursor);
  return { ids, pages };
}

describe('GET /api/v1/chats', () => {
  it('walks 250 chats page by page in contract order with no duplicate or gap', async () => {
    const { ids, pages } = await walk('', 17);
    expect(ids).toEqual(expectedOrder(all));
    expect(new Set(ids).size).toBe(250);
    expect(pages).toBe(Math.ceil(250 / 17));
  });

  it.each([
    ['archived=true', '&archived=true', (c: Chat) => c.is_archived],
    ['archived=false', '&archived=false', (c: Chat) => !c.is_archived],
    ['tag=red', '&tag=red', (c: Chat) => c.tags.includes('red')],
    ['agentId=beta', '&agentId=beta', (c: Chat) => c.agent_ids.includes('beta')],
    [
      'query=REPORT (case-insensitive substring)',
      '&query=REPORT',
      (c: Chat) => c.title.toLowerCase().includes('report'),
    ],
    [
      'tag + agentId + archived=false',
      '&tag=red&agentId=beta&archived=false',
      (c: Chat) => c.tags.includes('red') && c.agent_ids.includes('beta') && !c.is_archived,
    ],
    ['empty filters mean no filter', '&tag=&agentId=&query=', () => true],
  ])('walks with %s and returns exactly the matching chats in order', async (_label, query, match) => {
    const { ids } = await walk(query, 9);
    expect(ids).toEqual(expectedOrder(all.filter(match)));
  });

  it('uses the default limit of 50 and the maximum of 100', async () => {
    const res = await api.get('/api/v1/chats');
    expect(res.body.data).toHaveLength(50);
    expect(res.body.cursor.hasMore).toBe(true);
    expect((await api.get('/api/v1/chats?limit=100')).body.data).toHaveLength(100);
  });

  it.each(['0', '101', 'abc', '1.5', '-1', ''])('rejects limit=%s with fieldErrors.limit', async (limit) => {
    const res = await api.get(`/api/v1/chats?limit=${limit}`);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('Request validation failed.');
    expect(res.body.error.details.fieldErrors).toHaveProperty('limit');
  });

  it.each(['yes', 'TRUE', '1'])('rejects archived=%s with fieldErrors.archived', async (value) => {
    const res = await api.get(`/api/v1/chats?archived=${value}`);
    expect(res.status).toBe(400);
    expect(res.body.error.details.fieldErrors).toHaveProperty('archived');
  });

  it('rejects an undecodable, forged or foreign cursor with Invalid cursor value.', async () => {
    const good = (await api.get('/api/v1/chats?limit=5')).body.cursor.next as string;
    const [body, mac] = good.split('.');
    const forgedBody = Buffer.from(
      JSON.stringify({ l: 'chats:all', p: { s: '1#999999999999999#zzz', id: 'x' } }),
    ).toString('base64url');
    const archivedCursor = (await api.get('/api/v1/chats?limit=5&archived=false')).body.cursor.next as string;
    for (const cursor of ['garbage', `${body}.AAAA`, `${forgedBody}.${mac}`, `${body}`, `${good}.x`]) {
      const res = await api.get(`/api/v1/chats?cursor=${encodeURIComponent(cursor)}`);
      expect(res.status).toBe(400);
      expect(res.body.error).toEqual({
        code: 'VALIDATION_ERROR',
        message: 'Invalid cursor value.',
        details: { field: 'cursor' },
      });
    }
    // A cursor from another list (here: archived=false) does not decode as the unfiltered list's cursor.
    const foreign = await api.get(`/api/v1/chats?cursor=${encodeURIComponent(archivedCursor)}`);
    expect(foreign.status).toBe(400);
  });

  it('signs with the key in its own SECRET#CURSOR partition; a cursor another key signed is invalid', async () => {
    const db = DynamoDBDocumentClient.from(
      new DynamoDBClient({
        endpoint: process.env.TEST_DYNAMODB_ENDPOINT,
        region: 'us-east-1',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      }),
    );
    const get = async (key: { pk: string; sk: string }) =>
      (await db.send(new GetCommand({ TableName: api.tableName, Key: key, ConsistentRead: true }))).Item;
    const good = (await api.get('/api/v1/chats?limit=5')).body.cursor.next as string;
    const [body, mac] = good.split('.') as [string, string];
    const stored = await get(Keys.generatedSecret('CURSOR'));
    expect(stored).toMatchObject({ pk: 'SECRET#CURSOR', sk: 'SECRET', value: expect.stringMatching(/^[\w-]{43}$/) });
    const macWith = (key: string) =>
      createHmac('sha256', key).update(body).digest().subarray(0, 16).toString('base64url');
    expect(macWith(String(stored!.value))).toBe(mac);
    // Nothing in SETTINGS any more (where an earlier version kept it, readable by every route).
    expect(await get(Keys.setting('cursor-signing-key'))).toBeUndefined();
    // A cursor handed out under another key (an upgraded deployment's old cursors) is an invalid cursor.
    const old = await api.get(`/api/v1/chats?cursor=${body}.${macWith(randomBytes(32).toString('base64url'))}`);
    expect([old.status, old.body.error?.message]).toEqual([400, 'Invalid cursor value.']);
  });
});
