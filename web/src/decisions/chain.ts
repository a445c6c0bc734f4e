/**
 * The decision log's hash chain checked in the browser (contract §5.5.6), with the page's own
 * SubtleCrypto: `hash` = lowercase hex SHA-256 of the UTF-8 bytes of `prev_hash` followed by the
 * entry's canonical JSON (object keys sorted by UTF-16 code unit at every level, no whitespace,
 * strings and numbers as JSON.stringify writes them), the entry taken without `hash`; entry 1's
 * `prev_hash` is 64 zeros. The service computes it the same way (functions/model/decision-chain.ts).
 */
import type { DecisionEntry } from '../api/types.js';

export const GENESIS_HASH = '0'.repeat(64);

/** JSON with every object's keys sorted by code unit, and no whitespace. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const fields = Object.keys(value)
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      // Array.prototype.sort's default order compares UTF-16 code units.
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${fields.join(',')}}`;
  }
  return JSON.stringify(value);
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** The hash an entry should carry, from its other fields. */
export function entryHash(entry: DecisionEntry): Promise<string> {
  const { hash: _hash, ...rest } = entry;
  return sha256Hex(entry.prev_hash + canonicalJson(rest));
}

export type ChainCheck =
  { intact: true; count: number } | { intact: false; seq: number; problem: string; count: number };

/**
 * Checks the whole log, entry 1 first: each entry's `seq` follows the last (no gap), its
 * `prev_hash` is the last entry's `hash`, and its `hash` is what its fields give.
 * `onProgress` hears how many entries were checked (every 500).
 */
export async function checkChain(
  entries: readonly DecisionEntry[],
  onProgress?: (checked: number) => void,
): Promise<ChainCheck> {
  let prev = { seq: 0, hash: GENESIS_HASH };
  for (const [index, entry] of entries.entries()) {
    const fail = (problem: string): ChainCheck => ({ intact: false, seq: entry.seq, problem, count: entries.length });
    if (entry.seq !== prev.seq + 1) {
      return {
        intact: false,
        seq: prev.seq + 1,
        problem: `missing (the next entry is ${entry.seq})`,
        count: entries.length,
      };
    }
    if (entry.prev_hash !== prev.hash) return fail(`prev_hash does not match entry ${prev.seq}'s hash`);
    if ((await entryHash(entry)) !== entry.hash) return fail('hash does not match');
    prev = { seq: entry.seq, hash: entry.hash };
    if ((index + 1) % 500 === 0) onProgress?.(index + 1);
  }
  return { intact: true, count: entries.length };
}

/** The words the Verify button shows. */
export const checkText = (check: ChainCheck): string =>
  check.intact
    ? `Chain intact: ${check.count} ${check.count === 1 ? 'entry' : 'entries'}`
    : `Entry ${check.seq}: ${check.problem}`;
