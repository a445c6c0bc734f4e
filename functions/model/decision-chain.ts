/**
 * The decision log's chain (contract §5.5.6), exactly as an outside script recomputes it:
 * `hash` = lowercase hex SHA-256 of the UTF-8 bytes of `prev_hash` followed by the entry's
 * canonical JSON (keys sorted by UTF-16 code unit at every level, no whitespace, strings and
 * numbers as JSON.stringify writes them), the entry taken without `hash`. Pure functions.
 */
import { createHash } from 'node:crypto';
import type { DecisionEntry } from '../model.js';

/** `prev_hash` of entry 1. */
export const GENESIS_HASH = '0'.repeat(64);

/** JSON with object keys sorted by code unit at every level and no whitespace. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      // Default sort compares UTF-16 code units, as the contract says.
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The hash of an entry (given without its own `hash`) chained after `prevHash`. */
export function entryHash(entry: Omit<DecisionEntry, 'hash'>): string {
  return createHash('sha256')
    .update(entry.prev_hash + canonicalJson(entry), 'utf8')
    .digest('hex');
}

/**
 * Checks a run of entries (ascending seq, from seq 1 or after `before`): the first entry whose
 * seq, prev_hash or hash does not follow, or undefined when the whole run holds.
 */
export function firstBreak(
  entries: readonly DecisionEntry[],
  before: { seq: number; hash: string } = { seq: 0, hash: GENESIS_HASH },
): { seq: number; reason: 'seq' | 'prev_hash' | 'hash' } | undefined {
  let prev = before;
  for (const entry of entries) {
    if (entry.seq !== prev.seq + 1) return { seq: entry.seq, reason: 'seq' };
    if (entry.prev_hash !== prev.hash) return { seq: entry.seq, reason: 'prev_hash' };
    const { hash, ...rest } = entry;
    if (entryHash(rest) !== hash) return { seq: entry.seq, reason: 'hash' };
    prev = { seq: entry.seq, hash };
  }
  return undefined;
}
