/**
 * Shared helpers for the SSE tests (contract §6.4). Each test file gets its API from useApi
 * (or `streamsApi` with the default configuration) and its connections from `streams`.
 */
import { afterAll, expect } from '@jest/globals';
import { useApi } from '../../support/api.js';
import type { TestApi } from '../../support/api.js';
import { readEvents } from '../../support/events.js';
import type { LoggedEvent } from '../../support/events.js';
import { connect } from '../../support/sse.js';
import type { SseConnection, SseEvent } from '../../support/sse.js';

export const config = {
  agents: [{ id: 'assistant', name: 'Assistant', description: '' }],
  models: [{ id: 'm', name: 'M', description: '' }],
};

export const EPHEMERAL_TYPES = ['chat.typing', 'chat.user_typing', 'message.streaming.chunk'];
export const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
export const EVENT_ID = /^[A-Za-z0-9_-]{21}$/;

/** The one sleep (functions/platform/retry.ts), here for the tests that import it from this module. */
export { sleep } from '../../../functions/platform/retry.js';

/**
 * Opens stream connections on one API and closes every one of them after the file's tests.
 * Call it at the top level before useApi: jest runs afterAll hooks in the order they are
 * declared, so the connections close before the API does.
 */
export function streams(api: () => TestApi) {
  const open: SseConnection[] = [];
  afterAll(() => {
    for (const c of open) c.close();
  });
  return {
    /** Connects and waits for the opening comment and retry hint (the stream is live). */
    async open(query = '', headers: Record<string, string> = {}): Promise<SseConnection> {
      const c = await connect(`${api().url}/api/v1/events/stream${query}`, headers);
      open.push(c);
      expect(c.status).toBe(200);
      await c.waitFor((x) => x.frames.length >= 2, 5000);
      expect(c.frames.slice(0, 2)).toEqual([
        { kind: 'comment', text: 'stream opened' },
        { kind: 'retry', ms: 1000 },
      ]);
      return c;
    },
  };
}

/** The test file's API (with `config`) and its stream connections. Call it at the top level of the file. */
export function streamsApi() {
  const s = streams(() => api);
  const api = useApi({ config });
  return { api, s };
}

export const persisted = (c: SseConnection): SseEvent[] => c.events().filter((e) => !EPHEMERAL_TYPES.includes(e.event));
export const idsOf = (events: { id: string }[]) => events.map((e) => e.id);

/** The log entries after the one with id `afterId` (all of them when undefined). */
export async function logAfter(api: TestApi, afterId?: string): Promise<LoggedEvent[]> {
  const log = await readEvents(api.tableName);
  if (afterId === undefined) return log;
  const at = log.findIndex((e) => e.id === afterId);
  if (at < 0) throw new Error(`event ${afterId} is not in the log`);
  return log.slice(at + 1);
}

/** The id of the newest persisted event (undefined when the log is empty). */
export async function lastLoggedId(api: TestApi): Promise<string | undefined> {
  const log = await readEvents(api.tableName);
  return log.at(-1)?.id;
}

/**
 * Every received event is well framed: `event:` equals data.type, `id:` equals data.id, and
 * `data` is exactly the envelope {id, type, timestamp, payload}.
 */
export function expectWellFramed(c: SseConnection): void {
  for (const e of c.events()) {
    expect(Object.keys(e.data).sort()).toEqual(['id', 'payload', 'timestamp', 'type']);
    expect(e.data.id).toBe(e.id);
    expect(e.data.type).toBe(e.event);
    expect(e.id).toMatch(EVENT_ID);
    expect(e.data.timestamp).toMatch(ISO);
  }
}

/** Runs `tasks` with at most `width` in flight at once. */
export async function pool<T>(width: number, tasks: (() => Promise<T>)[]): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, tasks.length) }, async () => {
      while (next < tasks.length) {
        const i = next++;
        results[i] = await tasks[i]!();
      }
    }),
  );
  return results;
}

/** Expects a 2xx answer (so a failed write shows up as itself, not as a missing event). */
export function ok<T extends { status: number; text: string }>(res: T): T {
  if (res.status < 200 || res.status > 299) throw new Error(`unexpected ${res.status}: ${res.text}`);
  return res;
}
