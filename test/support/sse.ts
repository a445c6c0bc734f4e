/**
 * A small SSE client for tests: connects with fetch, parses frames as they arrive (comments,
 * `retry:`, and events with their `event`/`data`/`id` fields) and lets a test wait for them.
 */
export interface SseEvent {
  event: string;
  id: string;
  data: { id: string; type: string; timestamp: string; payload: Record<string, any> };
}

export interface SseConnection {
  status: number;
  headers: Headers;
  /** Everything received so far, in order. */
  frames: (
    | { kind: 'comment'; text: string }
    | { kind: 'retry'; ms: number }
    /** A block with an `id:` but no event (the stream's closing position). */
    | { kind: 'id'; id: string }
    | ({ kind: 'event' } & SseEvent)
  )[];
  events(): SseEvent[];
  /** Resolves when `check` holds over the frames so far (polled), or rejects after `ms`. */
  waitFor(check: (c: SseConnection) => boolean, ms?: number): Promise<void>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

export async function connect(url: string, headers: Record<string, string> = {}): Promise<SseConnection> {
  const controller = new AbortController();
  const res = await fetch(url, { headers, signal: controller.signal });
  const frames: SseConnection['frames'] = [];
  let buffer = '';
  const parseBlock = (block: string) => {
    const fields: Record<string, string> = {};
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) {
        frames.push({ kind: 'comment', text: line.slice(1).trim() });
        continue;
      }
      const at = line.indexOf(':');
      if (at < 0) continue;
      fields[line.slice(0, at)] = line.slice(at + 1).replace(/^ /, '');
    }
    const isEvent = fields.event !== undefined || fields.data !== undefined;
    if (fields.id !== undefined && !isEvent) frames.push({ kind: 'id', id: fields.id });
    if (fields.retry !== undefined) frames.push({ kind: 'retry', ms: Number(fields.retry) });
    if (isEvent) {
      frames.push({
        kind: 'event',
        event: fields.event ?? 'message',
        id: fields.id ?? '',
        data: JSON.parse(fields.data ?? 'null'),
      });
    }
  };
  const ended = (async () => {
    if (!res.body || !(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) return;
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          parseBlock(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
        }
      }
    } catch {
      // aborted by close()
    }
  })();
  const connection: SseConnection = {
    status: res.status,
    headers: res.headers,
    frames,
    events: () => frames.filter((f): f is { kind: 'event' } & SseEvent => f.kind === 'event'),
    async waitFor(check, ms = 10_000) {
      const deadline = Date.now() + ms;
      while (!check(connection)) {
        if (Date.now() > deadline)
          throw new Error(`SSE wait timed out after ${ms} ms; received ${frames.length} frames`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    ended,
    close: () => controller.abort(),
  };
  return connection;
}

/** The body of a non-stream (JSON) answer from the stream endpoint. */
export async function jsonOf(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(url, { headers });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

/** An event as a reconnecting client saw it, with the connection (0, 1, …) that carried it. */
export interface ReceivedEvent extends SseEvent {
  connection: number;
}

export interface ReconnectingClient {
  events: ReceivedEvent[];
  /** Per connection: the Last-Event-ID header it sent ('' for none), and when it ended (undefined while open). */
  connections: { lastEventId: string; status: number; endedAt?: number }[];
  /** Stops reconnecting and closes the open connection. */
  close(): Promise<void>;
}

/**
 * A client that reconnects as the WHATWG EventSource does (the browser's, which the web UI
 * uses): the `id:` field sets the last event ID buffer, which becomes the last event ID at the
 * end of every block, data or not; `retry:` sets the reconnection time; when the server ends the
 * stream, the client waits that long and reconnects to the same URL with the `Last-Event-ID`
 * header. Written here because no EventSource implementation is among the project's packages
 * (Node 22 has none built in); it follows the standard's parsing steps for the fields we send.
 */
export function reconnectingClient(url: string, headers: Record<string, string> = {}): ReconnectingClient {
  const events: ReceivedEvent[] = [];
  const connections: ReconnectingClient['connections'] = [];
  let lastEventId = '';
  let idBuffer = '';
  let reconnectMs = 1000;
  let stopped = false;
  let controller: AbortController | undefined;

  const runOnce = async (connection: number): Promise<void> => {
    controller = new AbortController();
    const sent = lastEventId;
    const res = await fetch(url, {
      headers: { ...headers, ...(sent ? { 'last-event-id': sent } : {}) },
      signal: controller.signal,
    });
    const entry: ReconnectingClient['connections'][number] = { lastEventId: sent, status: res.status };
    connections.push(entry);
    if (res.status !== 200 || !res.body) {
      await res.text().catch(() => undefined);
      stopped = true; // EventSource fails the connection on a non-200 answer
      return;
    }
    const decoder = new TextDecoder();
    let buffer = '';
    let type = '';
    let data: string[] = [];
    const line = (text: string) => {
      if (text === '') {
        lastEventId = idBuffer; // dispatch step 1: even a block without data sets it
        if (data.length > 0) {
          events.push({ event: type || 'message', id: lastEventId, data: JSON.parse(data.join('\n')), connection });
        }
        type = '';
        data = [];
        return;
      }
      if (text.startsWith(':')) return;
      const at = text.indexOf(':');
      const field = at < 0 ? text : text.slice(0, at);
      const value = at < 0 ? '' : text.slice(at + 1).replace(/^ /, '');
      if (field === 'event') type = value;
      else if (field === 'data') data.push(value);
      else if (field === 'id' && !value.includes('\0')) idBuffer = value;
      else if (field === 'retry' && /^\d+$/.test(value)) reconnectMs = Number(value);
    };
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n')) >= 0) {
          line(buffer.slice(0, end));
          buffer = buffer.slice(end + 1);
        }
      }
    } catch {
      // aborted by close()
    }
    entry.endedAt = Date.now();
  };

  const loop = (async () => {
    for (let connection = 0; !stopped; connection++) {
      await runOnce(connection).catch((error: unknown) => {
        if (!stopped) throw error;
      });
      if (stopped) return;
      await new Promise((r) => setTimeout(r, reconnectMs));
    }
  })();

  return {
    events,
    connections,
    async close() {
      stopped = true;
      controller?.abort();
      await loop;
    },
  };
}
