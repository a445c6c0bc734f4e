/**
 * A fresh read of a chat's pages joins what the cache holds without undoing live events that came
 * after the read was served (web/src/chat/message-order.ts, the messages query's structural sharing).
 */
import { describe, expect, it } from '@jest/globals';
import type { Message } from '../../web/src/api/types.js';
import { keepLive } from '../../web/src/chat/message-order.js';

const at = (second: number) => `2026-11-28T10:00:${String(second).padStart(2, '0')}.000Z`;
const msg = (id: string, second: number, more: Partial<Message> = {}): Message => ({
  id,
  chat_id: 'c',
  role: 'agent',
  sender_id: 'a',
  created_at: at(second),
  updated_at: at(second),
  content_final: id,
  content_partial: null,
  stream_state: 'complete',
  model_id: null,
  trace: null,
  ...more,
});
/** Pages as the service lists them: each newest first, the newest page first. */
const pages = (...lists: Message[][]) => ({
  pages: lists.map((data) => ({ data, cursor: { next: null, hasMore: false } })),
  pageParams: lists.map(() => null),
});
const ids = (data: { pages: { data: Message[] }[] }) => data.pages.map((page) => page.data.map((m) => m.id));

describe('keepLive', () => {
  it('keeps a message created by an event after the read was served (it vanished until the next read)', () => {
    const read = pages([msg('m2', 2), msg('m1', 1)]);
    const held = pages([msg('m3', 3), msg('m2', 2), msg('m1', 1)]);
    expect(ids(keepLive(held, read))).toEqual([['m3', 'm2', 'm1']]);
  });

  it("keeps chunks that arrived after the read: the held stream is newer than the read's", () => {
    const read = msg('s', 1, { stream_state: 'streaming', content_final: null, content_partial: 'Hel' });
    const live: Message = { ...read, content_partial: 'Hello, wor', updated_at: at(5) };
    expect(keepLive(pages([live]), pages([read])).pages[0]!.data).toEqual([live]);
    // The read wins when it is as new or newer (a completion the read already holds).
    const done = {
      ...read,
      stream_state: 'complete' as const,
      content_final: 'Hello',
      content_partial: null,
      updated_at: at(6),
    };
    expect(keepLive(pages([live]), pages([done])).pages[0]!.data).toEqual([done]);
    const same = pages([{ ...read }]);
    expect(keepLive(pages([read]), same)).toBe(same);
  });

  it('reads of older pages replace theirs; a held message older than the newest read is not kept twice', () => {
    const held = pages([msg('m2', 2), msg('m1', 1)], [msg('o1', 0)]);
    const read = pages([msg('m2', 2), msg('m1', 1)], [msg('o1', 0)]);
    expect(keepLive(held, read)).toBe(read);
    // A held message the read no longer has, older than its newest: gone (deleted with its chat's history).
    expect(ids(keepLive(pages([msg('m2', 2), msg('x', 1)]), pages([msg('m2', 2)])))).toEqual([['m2']]);
  });

  it('a first read (nothing held) and an empty read keep what they should', () => {
    const read = pages([msg('m1', 1)]);
    expect(keepLive(undefined, read)).toBe(read);
    // An empty newest page keeps what events brought (the service deletes no message).
    expect(ids(keepLive(pages([msg('m1', 1)]), pages([])))).toEqual([['m1']]);
    expect(ids(keepLive(pages([msg('m1', 1)]), pages()))).toEqual([]);
  });
});
