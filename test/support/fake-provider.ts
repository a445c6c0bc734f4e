/**
 * A fake auto-rename provider on 127.0.0.1 (no network in tests): one HTTP server that serves
 * every provider under a path prefix of its own (`/anthropic`, `/openai`, …), records each
 * request exactly as it arrived (method, path with query, headers, parsed JSON body) and answers
 * what the test asks for, by default a reply in the provider's own shape carrying `title`.
 * `baseUrls` goes into AUTO_RENAME_BASE_URLS.
 */
import { createServer } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export const PROVIDER_IDS = ['anthropic', 'openai', 'google', 'xai', 'openrouter'] as const;
export type FakeProviderId = (typeof PROVIDER_IDS)[number];

export interface RecordedRequest {
  provider: string;
  method: string;
  /** Path and query string, without the provider's prefix. */
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
}

export interface FakeAnswer {
  status?: number;
  /** A JSON value, or a string sent as is. */
  body?: unknown;
  delayMs?: number;
}

/** A successful reply whose generated text is `text`, in each provider's own shape. */
export function replyOf(provider: string, text: string): unknown {
  switch (provider) {
    case 'anthropic':
      return { id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'text', text }] };
    case 'google':
      return { candidates: [{ content: { role: 'model', parts: [{ text }] }, finishReason: 'STOP' }] };
    default:
      return {
        id: 'c1',
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content: text } }],
      };
  }
}

export interface FakeProvider {
  baseUrls: Record<FakeProviderId, string>;
  requests: RecordedRequest[];
  /** How the next requests are answered (default: a reply of `title`). */
  answer: (request: RecordedRequest) => FakeAnswer;
  /** The generated text of the default answer. */
  title: string;
  reset(): void;
  /** Resolves when `count` requests have arrived (fails after `ms`). */
  waitFor(count: number, ms?: number): Promise<RecordedRequest[]>;
  close(): Promise<void>;
}

export async function startFakeProvider(): Promise<FakeProvider> {
  const fake = {
    requests: [] as RecordedRequest[],
    title: 'Fake Title',
    answer: (request: RecordedRequest): FakeAnswer => ({ body: replyOf(request.provider, fake.title) }),
  };
  const defaultAnswer = fake.answer;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown = raw;
      try {
        body = JSON.parse(raw);
      } catch {
        // Recorded as text: the adapters always send JSON, so a test comparing bodies fails.
      }
      const [, provider = '', ...rest] = (req.url ?? '/').split('/');
      const request: RecordedRequest = {
        provider,
        method: req.method ?? '',
        path: `/${rest.join('/')}`,
        headers: req.headers,
        body,
      };
      fake.requests.push(request);
      const answer = fake.answer(request);
      setTimeout(() => {
        if (res.destroyed) return;
        const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body ?? {});
        res.writeHead(answer.status ?? 200, { 'content-type': 'application/json' });
        res.end(text);
      }, answer.delayMs ?? 0);
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  const baseUrls = Object.fromEntries(PROVIDER_IDS.map((id) => [id, `http://127.0.0.1:${port}/${id}`])) as Record<
    FakeProviderId,
    string
  >;
  return Object.assign(fake, {
    baseUrls,
    reset() {
      fake.requests.length = 0;
      fake.answer = defaultAnswer;
      fake.title = 'Fake Title';
    },
    async waitFor(count: number, ms = 5000) {
      const until = Date.now() + ms;
      while (fake.requests.length < count) {
        if (Date.now() > until) throw new Error(`expected ${count} provider requests, got ${fake.requests.length}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return fake.requests;
    },
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  });
}
