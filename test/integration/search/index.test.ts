/**
 * The search index itself (core/search.ts, docs/search.md), driven in-process as its writer is
 * driven by the stream or the local tail: segments per batch, merges by size class, redelivered
 * records, replaced segments deleted after their grace period, and a reader with an empty cache.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { readdirSync, rmSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StoredEvent } from '../../../functions/store/events-repo.js';
import { oneAgentConfig, useApi } from '../../support/api.js';
import { messageIdsFor, searchAll } from './support.js';

const cacheDir = mkdtempSync(join(tmpdir(), 'search-cache-test-'));
// No tail: this file is the writer.
const api = useApi({ config: oneAgentConfig, searchCacheDir: cacheDir });
const Search = await import('../../../functions/core/search.js');

/** The message.created event of a message the API created (as the stream would carry it). */
const createdEvent = (m: { id: string; chat_id: string; created_at: string; content_final: string }, seq: number) =>
  ({
    seq,
    id: `evt${seq}`,
    type: 'message.created',
    timestamp: m.created_at,
    payload: {
      chatId: m.chat_id,
      messageId: m.id,
      role: 'agent',
      senderId: 'assistant',
      streamState: 'complete',
      contentFinal: m.content_final,
      createdAt: m.created_at,
    },
  }) as StoredEvent;

const events: StoredEvent[] = [];

beforeAll(async () => {
  const chat = (await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm', title: 'index' })).body;
  for (let i = 0; i < 20; i++) {
    const m = await api.post(`/api/v1/chats/${chat.id}/messages`, {
      role: 'agent',
      senderId: 'assistant',
      content: `lemur note number ${i}`,
    });
    events.push(createdEvent(m.body, i + 1));
  }
}, 60_000);

describe('the search index', () => {
  it('adds a segment per batch and merges eight of a size class into one', async () => {
    for (const event of events) expect(await Search.indexEvents([event])).toBe(1);
    const manifest = await Search.indexManifest();
    // 20 single-document batches: two merges of eight, four left as they came.
    expect(manifest.segments.map((s) => s.docs)).toEqual([8, 8, 1, 1, 1, 1]);
    expect(await Search.retiredSegments()).toHaveLength(16);
    const found = await searchAll(api, 'lemur', 'messages', 3);
    expect(found.messages.map((m) => m.id)).toEqual(events.map((e) => String(e.payload.messageId)).reverse());
  });

  it('counts a redelivered record once, in a segment and across segments', async () => {
    expect(await Search.indexEvents([events[0]!, events[0]!, events[5]!])).toBe(3);
    const ids = await messageIdsFor(api, 'lemur');
    expect(ids).toHaveLength(20);
    expect(new Set(ids).size).toBe(20);
  });

  it('ignores events without searchable text', async () => {
    const noText = { ...events[1]!, payload: { ...events[1]!.payload, contentFinal: null, streamState: 'streaming' } };
    const cancelled = {
      ...events[1]!,
      type: 'message.streaming.complete',
      payload: { chatId: 'c', messageId: 'x', role: 'agent', streamState: 'cancelled', finalText: null },
    };
    const other = { ...events[1]!, type: 'chat.updated', payload: { chatId: 'c' } };
    const before = (await Search.indexManifest()).version;
    expect(await Search.indexEvents([noText, cancelled, other] as StoredEvent[])).toBe(0);
    expect((await Search.indexManifest()).version).toBe(before);
  });

  it('deletes replaced segments only after their grace period', async () => {
    await Search.compact(Date.now() + 2 * 60_000);
    expect(await Search.retiredSegments()).toHaveLength(16);
    await Search.compact(Date.now() + 16 * 60_000);
    expect(await Search.retiredSegments()).toEqual([]);
    expect(await messageIdsFor(api, 'lemur')).toHaveLength(20);
  });

  it('recognizes its own manifest write when the answer was lost and the retry failed the condition', async () => {
    const { ddb } = await import('../../../functions/store/db.js');
    const before = (await Search.indexManifest()).segments.map((s) => s.key);
    let replayed = 0;
    ddb().middlewareStack.add(
      (next) => async (args) => {
        const input = args.input as { Item?: { sk?: unknown } };
        if (replayed === 0 && input.Item?.sk === 'MANIFEST') {
          replayed += 1;
          await next(args); // the write lands...
          return next(args); // ...and its retry fails the version condition
        }
        return next(args);
      },
      { step: 'initialize', name: 'lose-manifest-answer' },
    );
    try {
      expect(await Search.indexEvents([{ ...events[7]!, id: 'evt-lost-answer' }])).toBe(1);
    } finally {
      ddb().middlewareStack.remove('lose-manifest-answer');
    }
    expect(replayed).toBe(1);
    const after = (await Search.indexManifest()).segments.map((s) => s.key);
    expect(new Set(after).size).toBe(after.length);
    expect(after.filter((k) => !before.includes(k))).toHaveLength(1);
  });

  it('fetches segments into an empty cache (a new container) and keeps only live ones there', async () => {
    rmSync(cacheDir, { recursive: true, force: true });
    Search.forgetReadersForTests();
    expect(await messageIdsFor(api, 'lemur')).toHaveLength(20);
    const live = (await Search.indexManifest()).segments.map((s) => s.key.split('/').at(-1));
    expect(readdirSync(cacheDir).sort()).toEqual(live.sort());
  });
});
