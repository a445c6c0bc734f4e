/** Shared by the search tests: waiting for the index, and walking every page of a search. */
import { expect } from '@jest/globals';
import type { TestApi } from '../../support/api.js';
import { eventually } from '../../support/wait.js';

export interface SearchBody {
  chats: { id: string; title: string; snippet: string; agent_ids: string[] }[];
  messages: { id: string; chat_id: string; chat_title: string; snippet: string; agent_ids: string[] }[];
  cursor: { next: string | null; hasMore: boolean };
}

const search = async (api: TestApi, q: string, scope: string, limit = 100, cursor?: string) => {
  const params = new URLSearchParams({ q, scope, limit: String(limit), ...(cursor ? { cursor } : {}) });
  const res = await api.get<SearchBody>(`/api/v1/search?${params}`);
  expect(res.status).toBe(200);
  return res.body;
};

/** Waits until `messageId` is found by `q` (the index follows the event log a moment later). */
export async function indexed(api: TestApi, messageId: string, q: string, timeoutMs = 20_000): Promise<number> {
  const started = Date.now();
  await eventually(
    () => search(api, q, 'messages'),
    (found) => found.messages.some((m) => m.id === messageId),
    { timeoutMs, intervalMs: 50, what: `message ${messageId} searchable by "${q}"` },
  );
  return Date.now() - started;
}

/** The ids of the messages `q` finds (one page of up to 100). */
export const messageIdsFor = async (api: TestApi, q: string): Promise<string[]> =>
  (await search(api, q, 'messages')).messages.map((m) => m.id);

/** Every page of a search, concatenated, with the pages' sizes. */
export async function searchAll(
  api: TestApi,
  q: string,
  scope: string,
  limit = 100,
): Promise<{ chats: SearchBody['chats']; messages: SearchBody['messages']; pages: SearchBody[] }> {
  const pages: SearchBody[] = [];
  let cursor: string | undefined;
  do {
    const page = await search(api, q, scope, limit, cursor);
    pages.push(page);
    expect(page.cursor.hasMore).toBe(page.cursor.next !== null);
    cursor = page.cursor.next ?? undefined;
    if (pages.length > 500) throw new Error('more than 500 pages');
  } while (cursor);
  return { chats: pages.flatMap((p) => p.chats), messages: pages.flatMap((p) => p.messages), pages };
}
