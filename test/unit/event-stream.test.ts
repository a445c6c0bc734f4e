import { describe, expect, it } from '@jest/globals';
import { ephemeralIdAt, frame } from '../../functions/core/event-stream.js';
import { eventIdFor, sequenceOf } from '../../functions/store/events-repo.js';

describe('SSE framing and ids', () => {
  it('frames an event as event/data/id lines and a blank line, with the envelope on one line', () => {
    const text = frame({ id: 'AAAAAAAAB_gfTzkWv44_9', type: 'chat.created', timestamp: '2026-01-01T00:00:00.000Z', payload: { chatId: 'c\nx' } });
    expect(text).toBe(
      'event: chat.created\n' +
        'data: {"id":"AAAAAAAAB_gfTzkWv44_9","type":"chat.created","timestamp":"2026-01-01T00:00:00.000Z","payload":{"chatId":"c\\nx"}}\n' +
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

  it('ephemeral ids carry their stream position and differ from the persisted id at that position', () => {
    const id = ephemeralIdAt(41);
    expect(id).toMatch(/^[A-Za-z0-9_-]{21}$/);
    expect(sequenceOf(id)).toBe(41);
    expect(id.slice(9, 13)).toBe(ephemeralIdAt(41).slice(9, 13));
    expect(id.slice(9, 13)).not.toBe(ephemeralIdAt(42).slice(9, 13));
  });
});
