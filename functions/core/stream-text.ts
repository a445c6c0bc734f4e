/**
 * Assembles a streaming message's text from its chunk items, with a per-container cache so
 * that an agent streaming through one warm function instance never re-reads what it already
 * appended: each chunk response then reads no chunk at all, and a cold instance reads the
 * chunks it misses once. The cache only ever holds chunks that were read from the table or
 * written by this instance, in sequence order, so it is a subset of the truth; callers that
 * must be exact (complete, cancel) also learn which numbers are missing.
 */
import { readChunks } from '../store/message-queries-repo.js';

interface Entry {
  /** Every chunk 1..upTo is in `text` (a number in `holes` was never written). */
  upTo: number;
  text: string;
  /** Known chunks above upTo, waiting for a gap below them to fill. */
  ahead: Map<number, string>;
  holes: Set<number>;
  /** When this instance first saw the lowest gap (ms), to give up on it eventually. */
  gapSince?: number;
}

/** Bounds the cache: a handful of concurrent streams per instance is the normal case. */
const MAX_ENTRIES = 64;
const MAX_CHARS = 32 * 1024 * 1024;
/** A chunk number reserved this long ago without its item is taken as never written. */
export const GAP_GRACE_MS = 2000;

const cache = new Map<string, Entry>();
let cachedChars = 0;

function entryOf(messageId: string): Entry {
  let entry = cache.get(messageId);
  if (entry) {
    cache.delete(messageId); // re-insert: Map order is the LRU order
  } else {
    entry = { upTo: 0, text: '', ahead: new Map(), holes: new Set() };
  }
  cache.set(messageId, entry);
  return entry;
}

function evict(): void {
  for (const [id, entry] of cache) {
    if (cache.size <= MAX_ENTRIES && cachedChars <= MAX_CHARS) return;
    cachedChars -= entry.text.length;
    cache.delete(id);
  }
}

export interface Assembled {
  /** The text of the chunks 1..through that exist, in order. */
  text: string;
  /** Chunk numbers <= through whose items were not found. */
  missing: number[];
  /**
   * The text of the chunks below the first missing number (`text` when none is missing): a
   * prefix of the final text, which holds the missing ones too if they land (a chunk's answer,
   * when a lower-numbered chunk posted concurrently is still being written).
   */
  prefix: string;
}

/**
 * The text of chunks 1..`through`. `own` is a chunk this instance just wrote (no need to read
 * it back). Reads only the numbers the cache lacks, in one Query over their span.
 */
export async function assemble(
  messageId: string,
  through: number,
  own?: { seq: number; text: string },
): Promise<Assembled> {
  const entry = entryOf(messageId);
  if (own && own.seq > entry.upTo) entry.ahead.set(own.seq, own.text);
  const unknown: number[] = [];
  for (let seq = entry.upTo + 1; seq <= through; seq++)
    if (!entry.ahead.has(seq) && !entry.holes.has(seq)) unknown.push(seq);
  if (unknown.length > 0) {
    const found = await readChunks(messageId, unknown[0]!, unknown.at(-1)!);
    for (const [seq, text] of found) if (seq > entry.upTo) entry.ahead.set(seq, text);
  }
  advance(entry);
  const missing: number[] = [];
  const parts: string[] = [entry.text];
  let prefix: string | undefined;
  for (let seq = entry.upTo + 1; seq <= through; seq++) {
    const text = entry.ahead.get(seq);
    if (text !== undefined) parts.push(text);
    else if (!entry.holes.has(seq)) {
      prefix ??= parts.join('');
      missing.push(seq);
    }
  }
  evict();
  const text = parts.join('');
  return { text, missing, prefix: prefix ?? text };
}

function advance(entry: Entry): void {
  for (;;) {
    const next = entry.upTo + 1;
    const text = entry.ahead.get(next);
    if (text !== undefined) {
      entry.text += text;
      cachedChars += text.length;
      entry.ahead.delete(next);
      entry.upTo = next;
      entry.gapSince = undefined;
    } else if (entry.holes.has(next)) {
      entry.upTo = next;
    } else if (entry.ahead.size > 0) {
      // A gap below known chunks: a concurrent append still in flight, or one that died
      // after reserving its number. Wait for it a little, then stop re-reading it.
      entry.gapSince ??= Date.now();
      if (Date.now() - entry.gapSince < GAP_GRACE_MS) return;
      entry.holes.add(next);
      entry.gapSince = undefined;
    } else {
      return;
    }
  }
}

/** Records numbers that will never have a chunk (voided by a finishing write). */
export function markHoles(messageId: string, seqs: number[]): void {
  const entry = cache.get(messageId);
  if (!entry) return;
  for (const seq of seqs) if (seq > entry.upTo) entry.holes.add(seq);
  advance(entry);
}

/** Whether the cache treats some number as a hole (a finisher must then verify it). */
export function assumedHoles(messageId: string, through: number): number[] {
  const entry = cache.get(messageId);
  if (!entry) return [];
  return [...entry.holes].filter((seq) => seq <= through);
}

/** Drops a finished message: its text now lives in the message item. */
export function forget(messageId: string): void {
  const entry = cache.get(messageId);
  if (!entry) return;
  cachedChars -= entry.text.length;
  cache.delete(messageId);
}

/** A streaming message's text so far: its chunks assembled, null while there is none. */
export async function partialText(messageId: string, chunkCount: number | undefined): Promise<string | null> {
  if (!chunkCount) return null;
  const { text } = await assemble(messageId, chunkCount);
  return text === '' ? null : text;
}
