/**
 * The browser's check of the decision log's chain (web/src/decisions/chain.ts, SubtleCrypto)
 * agrees with the service's (functions/model/decision-chain.ts, node:crypto) on entries whose
 * keys sort differently by UTF-16 code unit than by code point, with nested payloads, non-ASCII
 * text and numbers; and says where a chain breaks: an edited field, a changed prev_hash, a gap.
 */
import { describe, expect, it } from '@jest/globals';
import type { DecisionEntry } from '../../web/src/api/types.js';
import { canonicalJson, checkChain, checkText } from '../../web/src/decisions/chain.js';
import * as server from '../../functions/model/decision-chain.js';

/** A chain of `n` entries hashed by the service's own code. */
function chain(n: number): DecisionEntry[] {
  const entries: DecisionEntry[] = [];
  let prev = server.GENESIS_HASH;
  for (let seq = 1; seq <= n; seq++) {
    const entry = {
      seq,
      at: `2026-11-29T10:00:0${seq % 10}.000Z`,
      chat_id: 'c'.repeat(21),
      request_id: `r${seq}`.padEnd(21, 'x'),
      type: 'form' as const,
      title: `Réponse ${seq} — “quoted” \u2028 😀`,
      action: seq % 3 === 0 ? ('expired' as const) : ('resolved' as const),
      actor: seq % 3 === 0 ? ('deadline' as const) : ('session' as const),
      resolved_by: 'user' as const,
      // '\uff61' sorts after '\ud83d' (an astral character's high surrogate) by code unit, before it by code point.
      payload: { values: { '\uff61': 'half-width', '😀': [1, 2.5, -0, 1e21], b: true, a: { z: null, y: 'ü' } } },
      prev_hash: prev,
    };
    const hash = server.entryHash(entry as never);
    entries.push({ ...entry, hash } as DecisionEntry);
    prev = hash;
  }
  return entries;
}

describe("the browser's chain check", () => {
  it('writes canonical JSON exactly as the service does', () => {
    for (const entry of chain(3)) expect(canonicalJson(entry)).toBe(server.canonicalJson(entry));
  });

  it('finds an intact chain intact, and says so with the count', async () => {
    const check = await checkChain(chain(7));
    expect(check).toEqual({ intact: true, count: 7 });
    expect(checkText(check)).toBe('Chain intact: 7 entries');
  });

  it('says where it breaks: an edited entry, a prev_hash that does not follow, a missing entry', async () => {
    const edited = chain(5);
    edited[2] = { ...edited[2]!, title: 'changed' };
    expect(checkText(await checkChain(edited))).toBe('Entry 3: hash does not match');

    const relinked = chain(5);
    relinked[3] = { ...relinked[3]!, prev_hash: '0'.repeat(64) };
    expect(checkText(await checkChain(relinked))).toBe("Entry 4: prev_hash does not match entry 3's hash");

    const gap = chain(5).filter((e) => e.seq !== 2);
    expect(checkText(await checkChain(gap))).toBe('Entry 2: missing (the next entry is 3)');
  });
});
