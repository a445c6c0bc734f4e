import { describe, expect, it } from '@jest/globals';
import { eventIdFor, sequenceOf } from '../../functions/store/events-repo.js';
import { Keys, asciiLower, pad } from '../../functions/store/keys.js';

describe('event ids', () => {
  it('are 21 URL-safe characters that carry their sequence number', () => {
    for (const seq of [0, 1, 63, 64, 4095, 1_000_000, 2 ** 40 + 7]) {
      const id = eventIdFor(seq);
      expect(id).toMatch(/^[A-Za-z0-9_-]{21}$/);
      expect(sequenceOf(id)).toBe(seq);
    }
    expect(eventIdFor(5)).not.toBe(eventIdFor(5));
    expect(sequenceOf('short')).toBeUndefined();
  });
});

describe('keys', () => {
  it('zero-pads numbers so that string order is numeric order', () => {
    const values = [0, 9, 10, 1_700_000_000_000, 99_999_999_999_999];
    const padded = values.map(pad);
    expect([...padded].sort()).toEqual(padded);
  });

  it('orders the chat list key by pinned, then last activity, then id', () => {
    const sk = (pinned: boolean, at: string | null, id: string) =>
      Keys.chatListing({ id, pinned, is_archived: false, last_message_at: at }).gsi1sk;
    const ordered = [
      sk(true, null, 'b'),
      sk(true, null, 'a'),
      sk(false, '2025-01-02T00:00:00.000Z', 'a'),
      sk(false, '2025-01-01T00:00:00.000Z', 'z'),
      sk(false, null, 'z'),
    ];
    expect([...ordered].sort().reverse()).toEqual(ordered);
  });

  it('lower-cases only ASCII letters for tag prefixes', () => {
    expect(asciiLower('ÄBc-É')).toBe('Äbc-É');
    expect(Keys.tag('Alpha').sk.startsWith(Keys.tagsWithPrefix('AL').skPrefix)).toBe(true);
  });
});
