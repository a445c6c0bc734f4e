import { describe, expect, it } from '@jest/globals';
import { ephemeralIdAt, frame } from '../../functions/core/event-stream.js';
import { eventIdFor, sequenceOf } from '../../functions/store/events-repo.js';

describe('SSE framing and ids', () => {
  it('frames an event as event/data/id lines and a blank line, with the envelope on one line', () => {
    const text = frame({
      id: 'AAAAAAAAB_gfTzkWv44_9',
      type: 'chat.created',
      timestamp: '2026-01-01T00:00:00.000Z',
      payload: { chatId: 'c\nx' },
    });
    expect(text).toBe(
      'event: chat.created\n' +
        'data: {"id":"AAAAAAAAB_gfTzkWv44_9","type":"chat.created",' +
        '"timestamp":"2026-01-01T00:00:00.000Z","payload":{"chatId":"c\\nx"}}\n' +
        'id: AAAAAAAAB_gfTzkWv44_9\n\n',
    );
  });

  it('event ids are 21 URL-safe characters that encode their sequence number', () => {
    for (const seq of [0, 1, 63, 64, 100_000, 123_456_789]) {
      const id = eventIdFor(seq);
      expect(id).toMatch(/^[A-Za-z0-9_-]{21}$/);
      expect(sequenceOf(id)).toBe(seq);
    }
    expect(sequenceOf('short')).toBeUndefined();
    expect(sequenceOf('has spaces in it ....')).toBeUndefined();
  });

  it('ephemeral ids carry their stream position and a tag of it that persisted ids at that position lack', () => {
    const id = ephemeralIdAt(41);
    const persisted = eventIdFor(41);
    expect(id).toMatch(/^[A-Za-z0-9_-]{21}$/);
    expect(sequenceOf(id)).toBe(41);
    // The position digits are the persisted id's; the tag after them is not (a cursor must not resolve to an
    // ephemeral id).
    expect(id.slice(0, 9)).toBe(persisted.slice(0, 9));
    expect(id).not.toBe(persisted);
    // The tag depends on the position alone: every id for 41 carries it, while the rest of the id is random.
    const tag = id.slice(9, 13);
    const more = Array.from({ length: 20 }, () => ephemeralIdAt(41));
    expect(new Set(more.map((other) => other.slice(9, 13)))).toEqual(new Set([tag]));
    expect(new Set(more.map((other) => other.slice(13))).size).toBeGreaterThan(1);
    // Other positions have other tags, and persisted ids at 41 do not carry it (their characters there are random).
    expect(ephemeralIdAt(42).slice(9, 13)).not.toBe(tag);
    expect(ephemeralIdAt(40).slice(9, 13)).not.toBe(tag);
    expect(new Set(Array.from({ length: 20 }, () => eventIdFor(41).slice(9, 13))).has(tag)).toBe(false);
  });
});
