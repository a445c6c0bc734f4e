/**
 * Requests Node's HTTP parser refuses before any handler runs (issue 17 finding 1, second half):
 * the local runtime answers them in the contract's envelope (§1.7) instead of Node's bare
 * 431/400; and junk after a valid request (issue 25 item 6), which must not cost the valid
 * request its answer. Sent over raw sockets, since no HTTP client sends such bytes.
 */
import { describe, expect, it } from '@jest/globals';
import { connect } from 'node:net';
import { useApi } from '../../support/api.js';

const api = useApi();

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: any;
}

/** Writes `request` as bytes and reads the answer until the server closes the connection. */
function sendRaw(request: Buffer): Promise<RawResponse> {
  const { hostname, port } = new URL(api.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(request));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', body = ''] = text.split('\r\n\r\n', 2);
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        parsed = body;
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: parsed });
    });
  });
}

const requestOf = (line: string | Buffer, headers = 'host: local\r\n') =>
  Buffer.concat([typeof line === 'string' ? Buffer.from(line, 'latin1') : line, Buffer.from(`\r\n${headers}\r\n`)]);

describe('requests the HTTP parser refuses (local runtime)', () => {
  it('answers a URL over 16 KB with 413 PAYLOAD_TOO_LARGE in the envelope', async () => {
    const res = await sendRaw(requestOf(`GET /api/v1/chats/${'a'.repeat(17_000)} HTTP/1.1`));
    expect(res.status).toBe(413);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      error: {
        code: 'PAYLOAD_TOO_LARGE',
        message: 'Request line and headers exceed 16384 bytes.',
        details: { maxHeaderBytes: 16384 },
      },
    });
  });

  it('answers a header block over 16 KB the same way', async () => {
    const res = await sendRaw(
      requestOf('GET /api/v1/health HTTP/1.1', `host: local\r\nx-big: ${'b'.repeat(17_000)}\r\n`),
    );
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('answers raw non-ASCII bytes in the URL with 400 VALIDATION_ERROR in the envelope', async () => {
    const line = Buffer.concat([
      Buffer.from('GET /api/v1/chats/'),
      Buffer.from('é中', 'utf8'),
      Buffer.from(' HTTP/1.1'),
    ]);
    const res = await sendRaw(requestOf(line));
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      error: { code: 'VALIDATION_ERROR', message: 'Malformed HTTP request.', details: null },
    });
  });

  it('answers a request line that is no HTTP with 400 in the envelope', async () => {
    for (const line of ['GET', 'GET /api/v1/health HTTP/9.9', '\u0000\u0001 / HTTP/1.1', 'G\u00e9T / HTTP/1.1']) {
      const res = await sendRaw(requestOf(line));
      expect([line, res.status, res.body?.error?.code]).toEqual([line, 400, 'VALIDATION_ERROR']);
    }
  });

  it('keeps serving after refusing those requests, and still serves URLs just under the limit', async () => {
    expect((await api.get('/api/v1/health')).status).toBe(200);
    const near = await api.get(`/api/v1/chats/${'a'.repeat(15_000)}`);
    expect(near.status).toBe(404);
    expect(near.body.error.code).toBe('NOT_FOUND');
  });
});

/**
 * Writes `bytes` without half-closing (as a client that keeps its connection) and reads everything
 * the server sends until it closes the connection.
 */
function exchange(bytes: Buffer): Promise<string> {
  const { hostname, port } = new URL(api.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

/** A chunked body's data (the local runtime answers without content-length). */
function dechunked(body: string): string {
  let data = '';
  for (let rest = body; ;) {
    const eol = rest.indexOf('\r\n');
    const size = parseInt(rest.slice(0, eol), 16);
    if (!size) return data;
    data += rest.slice(eol + 2, eol + 2 + size);
    rest = rest.slice(eol + 2 + size + 2);
  }
}

describe('junk after a valid request on the same connection (local runtime)', () => {
  it('answers the valid request (201 with the message), then closes the connection; the message exists', async () => {
    const chat = await api.post('/api/v1/chats', { agentIds: ['agent-default'], modelId: 'model-default' });
    expect(chat.status).toBe(201);
    const body = JSON.stringify({ role: 'user', senderId: 'user:primary', content: 'before the junk' });
    const request =
      `POST /api/v1/chats/${chat.body.id}/messages HTTP/1.1\r\nhost: local\r\n` +
      `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const text = await exchange(
      Buffer.concat([Buffer.from(request), Buffer.from('\u0000\u0001 junk \r\n\r\n', 'latin1')]),
    );

    const [head = '', ...rest] = text.split('\r\n\r\n');
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 201 Created');
    // One answer only: no 400 written after (or over) it.
    expect(text.match(/HTTP\/1\.1 /g)).toHaveLength(1);
    expect(head.toLowerCase()).toContain('connection: close');
    const message = JSON.parse(dechunked(rest.join('\r\n\r\n'))) as {
      id: string;
      chat_id: string;
      content_final: string;
    };
    expect([message.chat_id, message.content_final]).toEqual([chat.body.id, 'before the junk']);

    const listed = await api.get(`/api/v1/chats/${chat.body.id}/messages`);
    expect(listed.body.data.map((m: { id: string }) => m.id)).toContain(message.id);
  });

  it('still answers 400 in the envelope and closes when no request is in flight', async () => {
    const ok = 'GET /api/v1/health HTTP/1.1\r\nhost: local\r\n\r\n';
    // The valid request's answer is written before the junk arrives: only the junk is answered 400.
    const { hostname, port } = new URL(api.url);
    const text = await new Promise<string>((resolve, reject) => {
      const chunks: Buffer[] = [];
      const socket = connect(Number(port), hostname, () => socket.write(ok));
      socket.on('data', (c: Buffer) => {
        chunks.push(c);
        if (chunks.length === 1) socket.write('\u0000\u0001 junk \r\n\r\n', 'latin1');
      });
      socket.on('error', reject);
      socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    });
    expect(text.match(/HTTP\/1\.1 \d+/g)).toEqual(['HTTP/1.1 200', 'HTTP/1.1 400']);
    expect(text).toContain('"code":"VALIDATION_ERROR"');
  });
});
