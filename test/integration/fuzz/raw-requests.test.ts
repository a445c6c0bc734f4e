/**
 * Requests Node's HTTP parser refuses before any handler runs (issue 17 finding 1, second half):
 * the local runtime answers them in the contract's envelope (§1.7) instead of Node's bare
 * 431/400. Sent over raw sockets, since no HTTP client sends such bytes.
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
