/**
 * A newest page read joins the messages a chat shows without undoing live events that came after
 * the read was served (web/src/chat/message-order.ts).
 */
import { describe, expect, it } from '@jest/globals';
import type { Message } from '../../web/src/api/types.js';
import { withNewestPage } from '../../web/src/chat/message-order.js';

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
const ids = (messages: Message[]) => messages.map((m) => m.id);

describe('withNewestPage', () => {
  it('keeps a message created by an event after the read was served (it vanished until the next read)', () => {
    const page = [msg('m1', 1), msg('m2', 2)];
    const shown = [msg('m1', 1), msg('m2', 2), msg('m3', 3)];
    expect(ids(withNewestPage(shown, page, false))).toEqual(['m1', 'm2', 'm3']);
    // Also on the first read: the stream was open before the read returned.
    expect(ids(withNewestPage([msg('m3', 3)], page, true))).toEqual(['m1', 'm2', 'm3']);
  });

  it("keeps chunks that arrived after the read: the shown stream is newer than the page's", () => {
    const read = msg('s', 1, { stream_state: 'streaming', content_final: null, content_partial: 'Hel' });
    const live: Message = { ...read, content_partial: 'Hello, wor', updated_at: at(5) };
    expect(withNewestPage([live], [read], false)).toEqual([live]);
    // The page wins when it is as new or newer (a completion the page already holds).
    const done = {
      ...read,
      stream_state: 'complete' as const,
      content_final: 'Hello',
      content_partial: null,
      updated_at: at(6),
    };
    expect(withNewestPage([live], [done], false)).toEqual([done]);
    expect(withNewestPage([read], [{ ...read }], false)).toEqual([read]);
  });

  it('keeps older pages already read, and none on the first read', () => {
    const shown = [msg('o1', 0), msg('m1', 1)];
    const page = [msg('m1', 1), msg('m2', 2)];
    expect(ids(withNewestPage(shown, page, false))).toEqual(['o1', 'm1', 'm2']);
    expect(ids(withNewestPage(shown, page, true))).toEqual(['m1', 'm2']);
  });

  it('an empty page keeps what events brought', () => {
    expect(ids(withNewestPage([msg('m1', 1)], [], true))).toEqual(['m1']);
    expect(ids(withNewestPage([], [], true))).toEqual([]);
  });
});
