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
  frames: ({ kind: 'comment'; text: string } | { kind: 'retry'; ms: number } | ({ kind: 'event' } & SseEvent))[];
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
    if (fields.retry !== undefined) frames.push({ kind: 'retry', ms: Number(fields.retry) });
    if (fields.event !== undefined || fields.data !== undefined) {
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
