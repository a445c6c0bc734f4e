/**
 * GET /api/v1/requests (contract §5.5.6): every chat's requests for an approvals view. Pending:
 * those with a deadline first, soonest first, then those without, oldest first; resolved and
 * cancelled: newest closing first; `all`; limit and cursor (§1.9) with the shape of GET /chats;
 * archived chats included; a deadline change moves a request in the order.
 */
import { describe, expect, it } from '@jest/globals';
import { choiceBody, requestsApi, ruleError } from './support.js';
import { expectSchemaError } from './support.js';
import { laterMillisecond } from '../../support/wait.js';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { Keys } from '../../../functions/store/keys.js';
import { backfillRequestListing } from '../../../local/request-listing-backfill.js';

const { api, h } = requestsApi();

async function page(query: string): Promise<{ data: any[]; cursor: { next: string | null; hasMore: boolean } }> {
  const res = await api.get(`/api/v1/requests${query}`);
  expect([res.status, res.body?.error]).toEqual([200, undefined]);
  expect(Object.keys(res.body).sort()).toEqual(['cursor', 'data']);
  return res.body;
}

/** Every page of a list, following the cursor. */
async function walk(query: string, limit: number): Promise<any[]> {
  const all: any[] = [];
  let cursor: string | null = null;
  do {
    const sep = query ? '&' : '?';
    const p = await page(`${query}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(p.data.length).toBeLessThanOrEqual(limit);
    expect(p.cursor.hasMore).toBe(p.cursor.next !== null);
    all.push(...p.data);
    cursor = p.cursor.next;
  } while (cursor);
  return all;
}

describe('GET /requests (§5.5.6)', () => {
  it('orders pending ones: deadlines soonest first, then the others oldest first, across chats', async () => {
    const [a, b] = [await h.newChat(), await h.newChat()];
    const plainOld = await h.create(a.id, choiceBody({ title: 'plain old' }));
    await laterMillisecond();
    const late = await h.create(b.id, choiceBody({ title: 'late', deadline: { inSeconds: 3000 } }));
    const plainNew = await h.create(b.id, choiceBody({ title: 'plain new' }));
    const soon = await h.create(a.id, choiceBody({ title: 'soon', deadline: { inSeconds: 1000 } }));
    const middle = await h.create(b.id, choiceBody({ title: 'middle', deadline: { inSeconds: 2000 } }));
    // Archived chats' requests are listed too.
    expect((await api.post(`/api/v1/chats/${b.id}/archive`)).status).toBe(200);

    const mine = new Set([plainOld, late, plainNew, soon, middle].map((r) => r.id));
    const listed = (await walk('', 2)).filter((r) => mine.has(r.id));
    expect(listed.map((r) => r.title)).toEqual(['soon', 'middle', 'late', 'plain old', 'plain new']);
    // The default status is pending, and each item is the Request as the chat lists it.
    expect(listed[0]).toEqual(await h.find(a.id, soon.id));
    expect((await walk('?status=pending', 50)).filter((r) => mine.has(r.id))).toEqual(listed);

    // A deadline change moves it; a removed deadline sends it among the others, by creation.
    expect((await h.patch(late.id, { deadline: { inSeconds: 500 } })).status).toBe(200);
    expect((await h.patch(soon.id, { deadline: null })).status).toBe(200);
    const moved = (await walk('', 50)).filter((r) => mine.has(r.id));
    expect(moved.map((r) => r.title)).toEqual(['late', 'middle', 'plain old', 'plain new', 'soon']);
  });

  it('lists resolved and cancelled ones newest closing first, and all of them with pending first', async () => {
    const chat = await h.newChat();
    const made = [];
    for (let i = 0; i < 4; i++) made.push(await h.create(chat.id, choiceBody({ title: `r${i}` })));
    const [r0, r1, r2, r3] = made;
    expect((await h.resolve(r2!.id, { selectedOptionIds: ['yes'] })).status).toBe(200);
    await laterMillisecond();
    expect((await h.cancel(r0!.id)).status).toBe(200);
    await laterMillisecond();
    expect((await h.resolve(r1!.id, { selectedOptionIds: ['no'] })).status).toBe(200);
    const mine = new Set(made.map((r) => r.id));
    const titles = async (q: string) => (await walk(q, 1)).filter((r) => mine.has(r.id)).map((r) => r.title);
    expect(await titles('?status=resolved')).toEqual(['r1', 'r2']);
    expect(await titles('?status=cancelled')).toEqual(['r0']);
    expect(await titles('?status=all')).toEqual(['r3', 'r1', 'r0', 'r2']);
    const resolved = (await walk('?status=resolved', 50)).find((r) => r.id === r1!.id);
    expect(resolved).toEqual(await h.find(chat.id, r1!.id));
    expect(r3!.status).toBe('pending');
  });

  it('limit is 1..200 (default 50); a bad cursor or status is a 400 that names it', async () => {
    const chat = await h.newChat();
    for (let i = 0; i < 3; i++) await h.create(chat.id, choiceBody());
    const one = await page('?limit=1');
    expect(one.data).toHaveLength(1);
    expect(one.cursor.hasMore).toBe(true);
    for (const q of ['?limit=0', '?limit=201', '?limit=x'])
      expectSchemaError(await api.get(`/api/v1/requests${q}`), 'limit');
    expectSchemaError(await api.get('/api/v1/requests?status=open'), 'status');
    const forged = await api.get('/api/v1/requests?cursor=abc.def');
    expect([forged.status, forged.body.error]).toEqual([400, ruleError('Invalid cursor value.', { field: 'cursor' })]);
    // A cursor of another list is refused too.
    const other = await api.get(`/api/v1/requests?status=resolved&cursor=${encodeURIComponent(one.cursor.next!)}`);
    expect(other.status).toBe(400);
    const chats = await api.get('/api/v1/chats?limit=1');
    const chatCursor: string = chats.body.cursor.next;
    expect(typeof chatCursor).toBe('string');
    expect((await api.get(`/api/v1/requests?cursor=${encodeURIComponent(chatCursor)}`)).status).toBe(400);
  });

  it("lists a data folder's requests from before the list once npm start has given them their keys", async () => {
    const chat = await h.newChat();
    const client = DynamoDBDocumentClient.from(
      new DynamoDBClient({ endpoint: process.env.TEST_DYNAMODB_ENDPOINT, region: 'us-east-1' }),
    );
    // Two request items as the service wrote them before issue 36: no listing keys, no deadline fields.
    const old = (id: string, status: string, minutesAgo: number) => {
      const created = new Date(Date.now() - minutesAgo * 60_000).toISOString();
      return {
        ...Keys.request(chat.id, created, id),
        type: 'request',
        request_type: 'choice',
        id,
        chat_id: chat.id,
        status,
        title: `old ${status}`,
        body: null,
        config: { options: [{ id: 'a', label: 'A' }], maxSelections: 1, minSelections: 0 },
        created_at: created,
        resolved_at: status === 'resolved' ? created : null,
        resolved_by: status === 'resolved' ? 'user' : null,
        resolution_payload: status === 'resolved' ? { selectedOptionIds: ['a'] } : null,
        trace: null,
      };
    };
    const items = [old('oldPendingRequest0001', 'pending', 10), old('oldResolvedRequest001', 'resolved', 5)];
    for (const Item of items) await client.send(new PutCommand({ TableName: api.tableName, Item }));
    await client.send(new DeleteCommand({ TableName: api.tableName, Key: Keys.setting('migration:request-listing') }));
    const ids = async (status: string) => (await walk(`?status=${status}`, 200)).map((r) => r.id);
    expect(await ids('all')).not.toContain('oldPendingRequest0001');

    expect(await backfillRequestListing()).toBe(2);
    expect(await ids('pending')).toContain('oldPendingRequest0001');
    expect(await ids('resolved')).toContain('oldResolvedRequest001');
    const listed = (await walk('?status=pending', 200)).find((r) => r.id === 'oldPendingRequest0001');
    expect([listed.deadline, listed.expired_at]).toEqual([null, null]);
    // Done once: a second start changes nothing.
    expect(await backfillRequestListing()).toBe(0);
    client.destroy();
  });
});
