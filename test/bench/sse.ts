/**
 * The benchmark's SSE client: the framing of test/support/sse.ts (comments, `retry:`, events
 * with `event`/`data`/`id`), plus the arrival time of every frame (performance.now() when its
 * bytes were read off the socket), so delivery latency can be measured against the moment a
 * write's HTTP response arrived. Waiters are woken as frames arrive, not by polling.
 */

export interface TimedEvent {
  /** performance.now() when the bytes carrying this event arrived. */
  at: number;
  event: string;
  id: string;
  data: { id: string; type: string; timestamp: string; payload: Record<string, unknown> };
}

export interface TimedComment {
  at: number;
  text: string;
}

/** What the server reported about the connection in its final `: usage` comment. */
export interface StreamUsage {
  ms: number;
  calls: number;
  rcu: number;
  wcu: number;
}

export interface BenchStream {
  status: number;
  events: TimedEvent[];
  comments: TimedComment[];
  /** Frames that could not be parsed (bad JSON in `data:`). */
  errors: string[];
  /** Resolves true once `check` holds (tested as frames arrive), or false after `ms`. */
  waitFor(check: () => boolean, ms: number): Promise<boolean>;
  /** Resolves when the server ends the stream (or close() aborts it). */
  ended: Promise<void>;
  /** The `: usage ms=… calls=… rcu=… wcu=…` comment, once received (EXPOSE_USAGE_HEADERS=1). */
  usage(): StreamUsage | undefined;
  /**
   * The last `id:` field received, in any block (an EventSource's Last-Event-ID: the WHATWG
   * parser sets it at the end of every block, with or without data); '' before any.
   */
  lastEventId(): string;
  /** The last `retry:` hint received. */
  retryMs(): number | undefined;
  /** performance.now() when the stream ended (undefined while open). */
  endedAt(): number | undefined;
  close(): void;
}

const USAGE = /^usage ms=(\d+) calls=(\d+) rcu=([\d.]+) wcu=([\d.]+)$/;

export async function openStream(url: string, headers: Record<string, string> = {}): Promise<BenchStream> {
  const controller = new AbortController();
  const res = await fetch(url, { headers, signal: controller.signal });
  let lastId = '';
  let retry: number | undefined;
  let endedAt: number | undefined;
  const events: TimedEvent[] = [];
  const comments: TimedComment[] = [];
  const errors: string[] = [];
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const w of [...waiters]) w();
  };

  const parseBlock = (block: string, at: number) => {
    const fields: Record<string, string> = {};
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) {
        comments.push({ at, text: line.slice(1).trim() });
        continue;
      }
      const colon = line.indexOf(':');
      if (colon < 0) continue;
      fields[line.slice(0, colon)] = line.slice(colon + 1).replace(/^ /, '');
    }
    if (fields.id !== undefined && !fields.id.includes('\0')) lastId = fields.id;
    if (fields.retry !== undefined && /^\d+$/.test(fields.retry)) retry = Number(fields.retry);
    if (fields.event === undefined && fields.data === undefined) return;
    try {
      events.push({
        at,
        event: fields.event ?? 'message',
        id: fields.id ?? '',
        data: JSON.parse(fields.data ?? 'null'),
      });
    } catch {
      errors.push(block.slice(0, 200));
    }
  };

  let done = false;
  const ended = (async () => {
    if (!res.body || !(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      await res.text().catch(() => undefined);
      return;
    }
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        const at = performance.now();
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          parseBlock(buffer.slice(0, end), at);
          buffer = buffer.slice(end + 2);
        }
        wake();
      }
    } catch {
      // aborted by close()
    }
  })().finally(() => {
    done = true;
    endedAt = performance.now();
    wake();
  });

  return {
    status: res.status,
    events,
    comments,
    errors,
    ended,
    waitFor: (check, ms) =>
      new Promise<boolean>((ok) => {
        if (check()) return ok(true);
        const finish = (value: boolean) => {
          waiters.delete(waiter);
          clearTimeout(timer);
          ok(value);
        };
        const waiter = () => {
          if (check()) finish(true);
          else if (done) finish(false);
        };
        const timer = setTimeout(() => finish(check()), ms);
        waiters.add(waiter);
      }),
    usage: () => {
      for (const c of comments) {
        const m = USAGE.exec(c.text);
        if (m) return { ms: Number(m[1]), calls: Number(m[2]), rcu: Number(m[3]), wcu: Number(m[4]) };
      }
      return undefined;
    },
    lastEventId: () => lastId,
    retryMs: () => retry,
    endedAt: () => endedAt,
    close: () => controller.abort(),
  };
}

/** One connection of a reconnecting client. */
export interface ClientConnection {
  stream: BenchStream;
  /** The Last-Event-ID header it was opened with ('' for none). */
  sentId: string;
  /** performance.now() when the request was sent. */
  requestedAt: number;
}

export interface ReconnectingStream {
  connections: ClientConnection[];
  /** Every event so far, over all connections, with the connection's index. */
  events(): (TimedEvent & { connection: number })[];
  /** Stops reconnecting, closes the open connection. */
  close(): Promise<void>;
}

/**
 * A client that reconnects as a browser's EventSource does: when the server ends the stream, it
 * waits the last `retry:` hint (1 s before any) and opens the same URL again with the last `id:`
 * it received as `Last-Event-ID`.
 */
export function openReconnecting(url: string): ReconnectingStream {
  const connections: ClientConnection[] = [];
  let stopped = false;
  let lastId = '';
  let retry = 1000;
  const loop = (async () => {
    while (!stopped) {
      const requestedAt = performance.now();
      const stream = await openStream(url, lastId ? { 'last-event-id': lastId } : {});
      connections.push({ stream, sentId: lastId, requestedAt });
      if (stream.status !== 200) return;
      if (stopped) return stream.close();
      await stream.ended;
      lastId = stream.lastEventId() || lastId;
      retry = stream.retryMs() ?? retry;
      if (!stopped) await new Promise((r) => setTimeout(r, retry));
    }
  })();
  return {
    connections,
    events: () => connections.flatMap((c, connection) => c.stream.events.map((e) => ({ ...e, connection }))),
    async close() {
      stopped = true;
      connections.at(-1)?.stream.close();
      await loop.catch(() => undefined);
    },
  };
}
