/**
 * The tag catalog's checks shared by update.test.ts and update-stranded.test.ts: its stored
 * counts (read straight from the table, as an operator would), a recount over every chat through
 * the API, and where the two differ.
 */
import { queryAll } from '../../../functions/store/db.js';
import { Keys } from '../../../functions/store/keys.js';
import type { TestApi } from '../../support/api.js';

/** Every catalog entry's stored count, read straight from the table. */
export async function catalogOf(): Promise<Map<string, number>> {
  const { pk } = Keys.tagsWithPrefix('');
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': pk },
    ConsistentRead: true,
  });
  return new Map(items.map((item) => [String(item.name), Number(item.usage_count)]));
}

/** How many chats carry each tag, over every chat of the table (through the API). */
export async function recountOf(api: TestApi): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  let cursor: string | null = null;
  do {
    const page: { data: { tags: string[] }[]; cursor: { next: string | null } } = (
      await api.get(`/api/v1/chats?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
    ).body;
    for (const chat of page.data) for (const t of chat.tags) counts.set(t, (counts.get(t) ?? 0) + 1);
    cursor = page.cursor.next;
  } while (cursor);
  return counts;
}

/** [tag, stored count, recount] wherever they differ (a tag no chat uses counts 0). */
export const mismatches = (stored: Map<string, number>, truth: Map<string, number>): [string, number, number][] =>
  [...new Set([...stored.keys(), ...truth.keys()])]
    .map((t): [string, number, number] => [t, stored.get(t) ?? 0, truth.get(t) ?? 0])
    .filter(([, a, b]) => a !== b);

export const farFuture = '9999-12-31T00:00:00.000Z';
