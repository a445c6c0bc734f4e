/**
 * One search index segment: an SQLite database file with an FTS5 table of message texts
 * (contract §9.2's text model is FTS5's `unicode61 remove_diacritics 2` tokenizer, and §9.3's
 * snippets are its snippet() function). `node:sqlite` ships FTS5 in Node 22, the Lambda
 * runtime: nothing to install.
 *
 * A segment is written once (built from documents, or merged from other segments) and then
 * only read; functions/core/search.ts decides which segments exist. Row ids put documents in
 * the search order: rowid = created_at in ms × 1024 + a tie counter, so a query walks the
 * matching documents newest first and stops after a page, whatever the number of matches.
 */
import { DatabaseSync } from 'node:sqlite';
import type { StatementSync } from 'node:sqlite';

export interface SearchDoc {
  /** The message id. */
  id: string;
  chatId: string;
  /** created_at in epoch ms: the sort key (§9.2). */
  createdMs: number;
  /** The message's content_final. */
  text: string;
}

export interface SegmentHit {
  id: string;
  chatId: string;
  createdMs: number;
  /** snippet() output: the text around the match, matched tokens between the two markers. */
  snippet: string;
}

/** Where a page starts: strictly after this (createdMs desc, id desc) position. */
export interface SegmentAfter {
  createdMs: number;
  /** Undefined: every document at `createdMs` is excluded too. */
  id?: string;
}

const TIES_PER_MS = 1024;
/** Snippet markers: Unicode noncharacters, removed from texts before indexing so none is ambiguous. */
export const MARK_OPEN = '\uFDD0';
export const MARK_CLOSE = '\uFDD1';
const MARKERS = /[\uFDD0\uFDD1]/g;
/** §9.3: about 20 tokens around the match, `…` where the text is cut. */
const SNIPPET_TOKENS = 20;

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS doc (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    chat_id TEXT NOT NULL,
    created_ms INTEGER NOT NULL
  );
  CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    body,
    tokenize = 'unicode61 remove_diacritics 2',
    columnsize = 0
  );`;

function open(path: string, readOnly: boolean): DatabaseSync {
  const db = new DatabaseSync(path, { readOnly });
  if (!readOnly) {
    // A segment file is built by one writer and published whole: no journal is needed.
    db.exec('PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;');
    db.exec(SCHEMA);
  }
  return db;
}

/** Adds documents to a segment being built; a document already present (same id) is skipped. */
function insertAll(db: DatabaseSync, docs: Iterable<SearchDoc>): number {
  const exists = db.prepare('SELECT 1 FROM doc WHERE id = ?');
  const lastTie = db.prepare('SELECT max(rowid) AS r FROM doc WHERE rowid BETWEEN ? AND ?');
  const putDoc = db.prepare('INSERT INTO doc (rowid, id, chat_id, created_ms) VALUES (?, ?, ?, ?)');
  const putText = db.prepare('INSERT INTO fts (rowid, body) VALUES (?, ?)');
  let added = 0;
  db.exec('BEGIN');
  try {
    for (const d of docs) {
      if (exists.get(d.id)) continue;
      const base = d.createdMs * TIES_PER_MS;
      const last = (lastTie.get(base, base + TIES_PER_MS - 1) as { r: number | null }).r;
      // More than 1,024 documents in one millisecond of one segment: never seen; the row is skipped
      // rather than mis-sorted.
      if (last !== null && last - base >= TIES_PER_MS - 1) continue;
      const rowid = last === null ? base : last + 1;
      putDoc.run(rowid, d.id, d.chatId, d.createdMs);
      putText.run(rowid, d.text.replace(MARKERS, ' '));
      added += 1;
    }
    db.exec('COMMIT');
  } catch (error) {
    db.exec('ROLLBACK');
    throw error;
  }
  return added;
}

function* docsOf(db: DatabaseSync): Generator<SearchDoc> {
  const rows = db
    .prepare('SELECT d.id, d.chat_id, d.created_ms, f.body FROM doc d JOIN fts f ON f.rowid = d.rowid ORDER BY d.rowid')
    .iterate() as Iterable<{ id: string; chat_id: string; created_ms: number; body: string }>;
  for (const r of rows) yield { id: r.id, chatId: r.chat_id, createdMs: r.created_ms, text: r.body };
}

export interface SegmentStats {
  docs: number;
  minCreatedMs: number;
  maxCreatedMs: number;
}

function statsOf(db: DatabaseSync): SegmentStats {
  const row = db.prepare('SELECT count(*) AS n, min(created_ms) AS lo, max(created_ms) AS hi FROM doc').get() as {
    n: number;
    lo: number | null;
    hi: number | null;
  };
  return { docs: row.n, minCreatedMs: row.lo ?? 0, maxCreatedMs: row.hi ?? 0 };
}

/** Finishes a built segment: FTS5's b-trees merged into one, the file compacted. */
function seal(db: DatabaseSync): SegmentStats {
  db.exec("INSERT INTO fts (fts) VALUES ('optimize')");
  const stats = statsOf(db);
  db.exec('VACUUM');
  db.close();
  return stats;
}

/** Writes a new segment file at `path` holding `docs` (duplicates by id dropped). */
export function buildSegment(path: string, docs: Iterable<SearchDoc>): SegmentStats {
  const db = open(path, false);
  insertAll(db, docs);
  return seal(db);
}

/** Writes a new segment file at `path` holding every document of `sources` once (newest source first wins). */
export function mergeSegments(path: string, sources: string[]): SegmentStats {
  const db = open(path, false);
  for (const source of sources) {
    const from = open(source, true);
    try {
      insertAll(db, docsOf(from));
    } finally {
      from.close();
    }
  }
  return seal(db);
}

/** Every document id of a segment (tests and the index check). */
export function segmentIds(path: string): string[] {
  const db = open(path, true);
  try {
    return (db.prepare('SELECT id FROM doc ORDER BY rowid').all() as { id: string }[]).map((r) => r.id);
  } finally {
    db.close();
  }
}

/** An open, read-only segment: kept open between searches of one container. */
export class SegmentReader {
  private readonly db: DatabaseSync;
  private readonly page: StatementSync;
  private readonly ties: StatementSync;

  constructor(path: string) {
    this.db = open(path, true);
    const select =
      `SELECT d.id, d.chat_id, d.created_ms, snippet(fts, 0, '${MARK_OPEN}', '${MARK_CLOSE}', '…', ` +
      `${SNIPPET_TOKENS}) AS snippet FROM fts JOIN doc d ON d.rowid = fts.rowid WHERE fts MATCH ?`;
    this.page = this.db.prepare(`${select} AND fts.rowid < ? ORDER BY fts.rowid DESC LIMIT ?`);
    this.ties = this.db.prepare(`${select} AND fts.rowid BETWEEN ? AND ?`);
  }

  /**
   * The first `limit` documents matching `match` (an FTS5 expression) after `after`, in
   * (createdMs desc, id desc) order. Reads about `limit` matches, not all of them.
   */
  search(match: string, limit: number, after?: SegmentAfter): SegmentHit[] {
    const sameMs = (ms: number) =>
      (this.ties.all(match, ms * TIES_PER_MS, ms * TIES_PER_MS + TIES_PER_MS - 1) as unknown as RawHit[]).map(toHit);
    const rows: SegmentHit[] = [];
    // Rows of one millisecond sit in insertion order, not id order: a millisecond is always read whole.
    if (after?.id !== undefined) rows.push(...sameMs(after.createdMs).filter((h) => h.id < after.id!));
    const upper = after ? after.createdMs * TIES_PER_MS : Number.MAX_SAFE_INTEGER;
    const page = (this.page.all(match, upper, limit) as unknown as RawHit[]).map(toHit);
    rows.push(...page);
    const last = page.at(-1);
    if (page.length === limit && last) {
      const seen = new Set(rows.map((r) => r.id));
      for (const h of sameMs(last.createdMs)) if (!seen.has(h.id)) rows.push(h);
    }
    rows.sort((a, b) => b.createdMs - a.createdMs || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    return rows.slice(0, limit);
  }

  close(): void {
    this.db.close();
  }
}

interface RawHit {
  id: string;
  chat_id: string;
  created_ms: number;
  snippet: string;
}

const toHit = (r: RawHit): SegmentHit => ({ id: r.id, chatId: r.chat_id, createdMs: r.created_ms, snippet: r.snippet });
