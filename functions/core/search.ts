/**
 * Search (contract §5.7, §9): titles by substring over the chat list, messages by full text
 * through the search index, one ordering across both, cursor paging.
 *
 * The message index is derived data (docs/search.md): immutable SQLite FTS5 segment files
 * (platform/fts-segment.ts) in the search bucket, listed by a versioned manifest item
 * (store/search-repo.ts). One writer, fed the message events (a DynamoDB stream consumer in
 * AWS, functions/jobs/search-index.ts; a tail of the event log locally), adds a small segment
 * per batch of messages and merges segments of equal size class, so a search opens a bounded
 * number of files whatever the instance's size and every segment stays immutable (a reader
 * keeps its copies until they leave the manifest).
 */
import { FieldRuleError } from '../errors.js';
import { EVENTS, isEvent } from '../model/events.js';
import { logger } from '../platform/logger.js';
import { retry } from '../platform/retry.js';
import type { RetryPolicy } from '../platform/retry.js';
import { buildSegment, MARK_CLOSE, MARK_OPEN, mergeSegments, SegmentReader } from '../platform/fts-segment.js';
import type { SearchDoc, SegmentAfter, SegmentHit } from '../platform/fts-segment.js';
import {
  deleteSegments,
  localSegment,
  newSegmentKey,
  pruneCache,
  publishSegment,
  scratchPath,
  SegmentGoneError,
} from '../platform/search-storage.js';
import { decodeCursor, encodeCursor } from '../store/cursor.js';
import type { StoredEvent } from '../store/events-repo.js';
import { asciiLower } from '../store/keys.js';
import { messageOrigin } from '../store/messages-repo.js';
import {
  allChatSummaries,
  forgetRetired,
  getManifest,
  hitContext,
  recordRetired,
  replaceManifest,
  retiredBefore,
} from '../store/search-repo.js';
import type { ChatSummary, RetiredSegment, SearchManifest, SegmentEntry } from '../store/search-repo.js';

// ---------------------------------------------------------------------------------------------
// Query text (§9.2) and snippets (§9.3)

/** Characters that make tokens under the unicode61 tokenizer: letters, digits, private use, marks. */
const TOKEN_CHAR = /[\p{L}\p{N}\p{Co}\p{M}]/u;

/**
 * The FTS5 expression for `q` (§9.2): each whitespace-separated term a quoted phrase (so quotes,
 * `*`, AND/OR/NOT/NEAR, `:` and parentheses are plain text), all of them required, the last one
 * a prefix. A term without any token character constrains nothing and is left out (FTS5 reads
 * an empty phrase the same way); undefined when no term is left: no message can match.
 */
export function ftsQuery(q: string): string | undefined {
  const terms = q.trim().split(/\s+/).filter(Boolean);
  const phrases: string[] = [];
  terms.forEach((term, i) => {
    if (!TOKEN_CHAR.test(term)) return;
    const phrase = `"${term.replace(/"/g, '""')}"`;
    phrases.push(i === terms.length - 1 ? `${phrase} *` : phrase);
  });
  return phrases.length > 0 ? phrases.join(' ') : undefined;
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** §9.3: every character HTML-escaped, then the index's match markers turned into `<mark>` tags. */
export function renderSnippet(raw: string): string {
  return raw
    .replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!)
    .replaceAll(MARK_OPEN, '<mark>')
    .replaceAll(MARK_CLOSE, '</mark>');
}

/** §9.1: a substring, case-insensitive for ASCII letters only; `%`, `_` and `\` are plain text. */
export const titleMatches = (title: string, q: string): boolean => asciiLower(title).includes(asciiLower(q));

// ---------------------------------------------------------------------------------------------
// One ordering across scopes (§9.4)

export type HitKind = 'message' | 'chat';

/** A place in the merged order: sort key (ms), kind, id. */
export interface OrderKey {
  ms: number;
  kind: HitKind;
  id: string;
}

/** Negative when `a` comes first: sort key desc, messages before chats on a tie, then id desc. */
export function compareOrder(a: OrderKey, b: OrderKey): number {
  if (a.ms !== b.ms) return b.ms - a.ms;
  if (a.kind !== b.kind) return a.kind === 'message' ? -1 : 1;
  return a.id === b.id ? 0 : a.id < b.id ? 1 : -1;
}

/**
 * Where message hits resume after the cursor's item: after a message, the smaller ids of its
 * sort key; after a chat, strictly older ones (messages of its sort key came before it).
 */
export function messagesAfter(cursor: OrderKey | undefined): SegmentAfter | undefined {
  if (!cursor) return undefined;
  return cursor.kind === 'message' ? { createdMs: cursor.ms, id: cursor.id } : { createdMs: cursor.ms };
}

const isAfter = (key: OrderKey, cursor: OrderKey | undefined) => !cursor || compareOrder(cursor, key) < 0;

// ---------------------------------------------------------------------------------------------
// Search

export interface SearchInput {
  q: string;
  scope: 'all' | 'titles' | 'messages';
  cursor?: string | undefined;
  limit: number;
}

export interface ChatHit {
  id: string;
  title: string;
  snippet: string;
  agent_ids: string[];
}

export interface MessageHit {
  id: string;
  chat_id: string;
  chat_title: string;
  snippet: string;
  agent_ids: string[];
}

export interface SearchResult {
  chats: ChatHit[];
  messages: MessageHit[];
  cursor: { next: string | null; hasMore: boolean };
}

const CURSOR_LIST = 'search';

async function cursorKey(cursor: string | undefined): Promise<OrderKey | undefined> {
  if (cursor === undefined) return undefined;
  const p = await decodeCursor(CURSOR_LIST, cursor);
  const { ms, kind, id } = { ms: p.k, kind: p.t, id: p.i };
  if (typeof ms !== 'number' || !Number.isFinite(ms) || (kind !== 'm' && kind !== 'c') || typeof id !== 'string') {
    throw new FieldRuleError('cursor', 'Invalid cursor value.');
  }
  return { ms, kind: kind === 'm' ? 'message' : 'chat', id };
}

const chatSortMs = (c: ChatSummary) => Date.parse(c.last_message_at ?? c.updated_at ?? c.created_at);

type Ranked = { key: OrderKey; hit: { chat: ChatHit } | { message: MessageHit } };

async function titleHits(q: string, want: number, cursor: OrderKey | undefined): Promise<Ranked[]> {
  const found = await allChatSummaries();
  return found
    .filter((c) => titleMatches(c.title, q))
    .map((c) => ({
      key: { ms: chatSortMs(c), kind: 'chat' as const, id: c.id },
      hit: { chat: { id: c.id, title: c.title, snippet: c.title, agent_ids: c.agent_ids ?? [] } },
    }))
    .filter((r) => isAfter(r.key, cursor))
    .sort((a, b) => compareOrder(a.key, b.key))
    .slice(0, want);
}

async function messageHits(q: string, want: number, cursor: OrderKey | undefined): Promise<Ranked[]> {
  const match = ftsQuery(q);
  if (!match) return [];
  let index = await SearchIndex.current();
  let refreshed = false;
  // A segment replaced (and deleted) after the manifest was read: read it again, once a search.
  const segmentReplaced: RetryPolicy<SegmentHit[]> = {
    attempts: 2,
    backoff: () => 0,
    retryable: (error) => error instanceof SegmentGoneError,
    mayRetry: () => !refreshed,
  };
  const ranked: Ranked[] = [];
  let after = messagesAfter(cursor);
  // Hits whose message or chat is gone (the index is derived and may lag a deletion) are
  // dropped, and the page is filled from further on.
  for (;;) {
    const hits = await retry(segmentReplaced, async (n) => {
      if (n > 1) {
        refreshed = true;
        index = await SearchIndex.current(true);
      }
      return index.search(match, want - ranked.length, after);
    });
    if (hits.length === 0) return ranked;
    const context = await hitContext(
      hits.map((h) => h.chatId),
      hits.map((h) => h.id),
    );
    for (const h of hits) {
      const chat = context.chats.get(h.chatId);
      if (!chat || !context.messages.has(h.id)) continue;
      ranked.push({
        key: { ms: h.createdMs, kind: 'message', id: h.id },
        hit: {
          message: {
            id: h.id,
            chat_id: h.chatId,
            chat_title: chat.title,
            snippet: renderSnippet(h.snippet),
            agent_ids: chat.agent_ids ?? [],
          },
        },
      });
    }
    const last = hits.at(-1)!;
    if (ranked.length >= want || hits.length < want) return ranked;
    after = { createdMs: last.createdMs, id: last.id };
  }
}

/** GET /search (§5.7, §9). */
export async function search(input: SearchInput): Promise<SearchResult> {
  const cursor = await cursorKey(input.cursor);
  const q = input.q.trim();
  const want = input.limit + 1;
  const [titles, messages] = await Promise.all([
    input.scope === 'messages' ? [] : titleHits(q, want, cursor),
    input.scope === 'titles' ? [] : messageHits(q, want, cursor),
  ]);
  const merged = [...titles, ...messages].sort((a, b) => compareOrder(a.key, b.key));
  const page = merged.slice(0, input.limit);
  const hasMore = merged.length > input.limit;
  const last = page.at(-1);
  return {
    chats: page.flatMap((r) => ('chat' in r.hit ? [r.hit.chat] : [])),
    messages: page.flatMap((r) => ('message' in r.hit ? [r.hit.message] : [])),
    cursor: {
      next:
        hasMore && last
          ? await encodeCursor(CURSOR_LIST, {
              k: last.key.ms,
              t: last.key.kind === 'message' ? 'm' : 'c',
              i: last.key.id,
            })
          : null,
      hasMore,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The index as a reader sees it

/** Segment readers of this container, by object key: opened once, closed when the key leaves the manifest. */
const readers = new Map<string, SegmentReader>();
let lastVersion = -1;

class SearchIndex {
  private constructor(private readonly segments: SegmentEntry[]) {}

  /** The index as the manifest lists it now (one eventually consistent GetItem). */
  static async current(consistent = false): Promise<SearchIndex> {
    const manifest = await getManifest(consistent);
    if (manifest.version !== lastVersion) {
      const live = new Set(manifest.segments.map((s) => s.key));
      for (const [key, reader] of readers) {
        if (live.has(key)) continue;
        reader.close();
        readers.delete(key);
      }
      pruneCache(live);
      lastVersion = manifest.version;
    }
    return new SearchIndex(manifest.segments);
  }

  /**
   * The first `limit` matches after `after`, newest first, across segments (a message indexed
   * twice counts once). Segments are visited newest content first, and the walk stops at the
   * first segment that cannot hold anything newer than the page's last hit.
   */
  async search(match: string, limit: number, after: SegmentAfter | undefined): Promise<SegmentHit[]> {
    const order = [...this.segments]
      .filter((s) => !after || s.minCreatedMs <= after.createdMs)
      .sort((a, b) => b.maxCreatedMs - a.maxCreatedMs);
    const hits = new Map<string, SegmentHit>();
    const byOrder = (a: SegmentHit, b: SegmentHit) =>
      b.createdMs - a.createdMs || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
    let best: SegmentHit[] = [];
    for (const segment of order) {
      const boundary = best.length >= limit ? best[limit - 1] : undefined;
      if (boundary && boundary.createdMs > segment.maxCreatedMs) break;
      const reader = await readerFor(segment.key);
      for (const h of reader.search(match, limit, after)) if (!hits.has(h.id)) hits.set(h.id, h);
      best = [...hits.values()].sort(byOrder).slice(0, limit);
    }
    return best;
  }
}

/** Tests only: forgets this container's open segments, as a new container would start. */
export function forgetReadersForTests(): void {
  for (const reader of readers.values()) reader.close();
  readers.clear();
  lastVersion = -1;
}

async function readerFor(key: string): Promise<SegmentReader> {
  let reader = readers.get(key);
  if (!reader) {
    reader = new SegmentReader(await localSegment(key));
    readers.set(key, reader);
  }
  return reader;
}

// ---------------------------------------------------------------------------------------------
// The index writer

/** Segments merge in groups of this many of one size class (about 8× the documents per class). */
const FANOUT = 8;
/** A segment this large is never merged again: a merge's work, and a reader's download, stay bounded. */
export const MAX_MERGED_DOCS = 25_000;
/** A replaced segment is deleted this long after it left the manifest (readers may still be reading it). */
const RETIRE_GRACE_MS = 15 * 60_000;

const sizeClass = (docs: number) => Math.floor(Math.log(Math.max(docs, 1)) / Math.log(FANOUT));

/**
 * Which segments to merge next, if any: FANOUT segments of one size class (the newest such
 * group), none of them at the size cap. Each merge makes a segment of the next class, so a
 * document is rewritten about log8(n) times and the index holds at most ~7 segments per class.
 */
export function planMerge(segments: readonly SegmentEntry[]): SegmentEntry[] | undefined {
  const byClass = new Map<number, SegmentEntry[]>();
  for (const s of segments) {
    if (s.docs >= MAX_MERGED_DOCS) continue;
    const group = byClass.get(sizeClass(s.docs)) ?? [];
    group.push(s);
    byClass.set(sizeClass(s.docs), group);
  }
  for (const group of [...byClass.entries()].sort((a, b) => a[0] - b[0]).map(([, g]) => g)) {
    if (group.length >= FANOUT) return group.slice(-FANOUT);
  }
  return undefined;
}

/** The searchable document an event carries, if any (§9.2: messages with a content_final). */
export async function documentOf(event: StoredEvent): Promise<SearchDoc | undefined> {
  if (isEvent(event, EVENTS.messageCreated)) {
    const { messageId, chatId, createdAt, contentFinal } = event.payload;
    if (contentFinal === null || contentFinal === '') return undefined;
    return { id: messageId, chatId, createdMs: Date.parse(createdAt), text: contentFinal };
  }
  if (isEvent(event, EVENTS.messageStreamingComplete)) {
    const { messageId, streamState, finalText } = event.payload;
    if (streamState !== 'complete' || finalText === null || finalText === '') return undefined;
    const origin = await messageOrigin(messageId);
    if (!origin) return undefined;
    return { id: messageId, chatId: origin.chatId, createdMs: origin.createdMs, text: finalText };
  }
  return undefined;
}

async function publish(path: string, stats: Omit<SegmentEntry, 'key' | 'bytes'>): Promise<SegmentEntry> {
  const key = newSegmentKey();
  const bytes = await publishSegment(path, key);
  return { key, bytes, ...stats };
}

/**
 * Adds the documents of `events` to the index: one new segment, published and listed in the
 * manifest, then merges while a size class is full. Safe to repeat (a document indexed twice is
 * one hit) and safe against a second writer (every manifest change is conditional).
 */
export async function indexEvents(events: readonly StoredEvent[]): Promise<number> {
  const docs = (await Promise.all(events.map(documentOf))).filter((d): d is SearchDoc => d !== undefined);
  if (docs.length === 0) return 0;
  const path = scratchPath();
  const added = await publish(path, buildSegment(path, docs));
  const written = await retry(MANIFEST_RACES, async () => {
    const manifest = await getManifest(true);
    const next = { version: manifest.version + 1, segments: [...manifest.segments, added] };
    return (await replaceManifest(manifest, next)) ? next : undefined;
  });
  await compact(Date.now(), written);
  return docs.length;
}

/** A manifest another writer changed since it was read is read again at once, until the write lands. */
const MANIFEST_RACES: RetryPolicy<SearchManifest | undefined> = {
  attempts: Infinity,
  backoff: () => 0,
  retryResult: (written) => written === undefined,
};

/** How often (ms) one writer container looks for replaced segments past their grace period. */
const CLEANUP_EVERY_MS = 60_000;
let lastCleanup = 0;

/**
 * Merges while a size class is full, then (at most once a minute) deletes replaced segments past
 * their grace period. `known`: the manifest the caller just wrote, to save a read.
 */
export async function compact(now = Date.now(), known?: SearchManifest): Promise<void> {
  let manifest = known ?? (await getManifest(true));
  for (let round = 0; round < 16; round++) {
    const group = planMerge(manifest.segments);
    if (!group) break;
    const sources = await Promise.all(group.map((s) => localSegment(s.key)));
    const path = scratchPath();
    // Newest first, so a document indexed twice keeps its latest text.
    const merged = await publish(path, mergeSegments(path, sources.reverse()));
    const gone = new Set(group.map((s) => s.key));
    const segments = manifest.segments.flatMap((s) =>
      !gone.has(s.key) ? [s] : s.key === group[0]!.key ? [merged] : [],
    );
    if (await replaceManifest(manifest, { segments })) {
      await recordRetired([...gone], now);
      manifest = { version: manifest.version + 1, segments };
    } else {
      // Another writer moved first: drop this merge's output and look again.
      await deleteSegments([merged.key]);
      manifest = await getManifest(true);
    }
  }
  if (now - lastCleanup < CLEANUP_EVERY_MS) return;
  lastCleanup = now;
  const expired = await retiredBefore(now - RETIRE_GRACE_MS);
  if (expired.length === 0) return;
  try {
    await deleteSegments(expired.map((r) => r.key));
    await forgetRetired(expired);
  } catch (error) {
    logger.warn('search index: deleting replaced segments failed', { error });
  }
}

/** Segments replaced by merges and not deleted yet (tests and the benchmark). */
export const retiredSegments = (): Promise<RetiredSegment[]> => retiredBefore(Number.MAX_SAFE_INTEGER);

/** The manifest (tests and the benchmark). */
export const indexManifest = (): Promise<SearchManifest> => getManifest(true);
