/**
 * The API's JSON answers compressed by what the request accepts (functions/middleware/compression.ts),
 * read as raw bytes (node:http does not decode them, as fetch would): brotli before gzip, none when
 * the request accepts neither or refuses them (q=0), none for a small answer, never for the event
 * stream; `Vary: Accept-Encoding` on every answer it could compress. A compressed answer decodes to
 * the same JSON the uncompressed one carries, and an Idempotency-Key replay is compressed the same.
 */
import { describe, expect, it } from '@jest/globals';
import { request } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { useApi } from '../../support/api.js';
import { acceptedEncoding } from '../../../functions/middleware/compression.js';

const api = useApi();

interface Raw {
  status: number;
  headers: IncomingHttpHeaders;
  bytes: Buffer;
}

/** One request, its answer's bytes as sent (a stream's first bytes, then it is closed). */
function raw(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const url = new URL(`${api.url}${path}`);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      url,
      { method, headers: { ...headers, ...(payload ? { 'content-type': 'application/json' } : {}) } },
      (res) => {
        const chunks: Buffer[] = [];
        const done = () => resolve({ status: res.statusCode!, headers: res.headers, bytes: Buffer.concat(chunks) });
        res.on('data', (c: Buffer) => {
          chunks.push(c);
          if (res.headers['content-type']?.startsWith('text/event-stream')) {
            res.destroy();
            done();
          }
        });
        res.on('end', done);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
const decoded = (r: Raw): unknown => {
  const encoding = r.headers['content-encoding'];
  const bytes = encoding === 'br' ? brotliDecompressSync(r.bytes) : encoding === 'gzip' ? gunzipSync(r.bytes) : r.bytes;
  return JSON.parse(bytes.toString('utf8'));
};

/** Enough chats for a list of about 10 KB. */
async function seedChats(count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const res = await api.post('/api/v1/chats', {
      agentIds: ['agent-default'],
      modelId: 'model-default',
      title: `A chat about the deploy, number ${i}`,
      tags: ['work', 'ops'],
    });
    expect(res.status).toBe(201);
  }
}

describe('compressed answers', () => {
  it('sends brotli, else gzip, else the plain JSON, by Accept-Encoding; each decodes to the same answer', async () => {
    await seedChats(30);
    const path = '/api/v1/chats?limit=30';
    const plain = await raw('GET', path, {});
    expect(plain.status).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toMatch(/Accept-Encoding/);
    expect(plain.bytes.length).toBeGreaterThan(8_000);
    const expected = JSON.parse(plain.bytes.toString('utf8'));

    const cases: [string, string | undefined][] = [
      ['gzip, deflate, br', 'br'],
      ['br;q=1.0, gzip;q=0.8', 'br'],
      ['gzip', 'gzip'],
      ['gzip, br;q=0', 'gzip'],
      ['deflate', undefined],
      ['identity', undefined],
    ];
    for (const [accept, encoding] of cases) {
      const r = await raw('GET', path, { 'accept-encoding': accept });
      expect([accept, r.status, r.headers['content-encoding']]).toEqual([accept, 200, encoding]);
      expect(decoded(r)).toEqual(expected);
      if (encoding) expect(r.bytes.length).toBeLessThan(plain.bytes.length / 4);
    }
  });

  it('leaves a small answer as it is, and adds Accept-Encoding to a CORS Vary', async () => {
    const small = await raw('GET', '/api/v1/health', { 'accept-encoding': 'br, gzip' });
    expect(small.status).toBe(200);
    expect(small.bytes.length).toBeLessThan(1024);
    expect(small.headers['content-encoding']).toBeUndefined();

    await seedChats(10);
    const cors = await raw('GET', '/api/v1/chats?limit=10', {
      'accept-encoding': 'gzip',
      origin: 'https://app.example',
    });
    expect(cors.headers['content-encoding']).toBe('gzip');
    expect(cors.headers.vary).toBe('Origin, Accept-Encoding');
  });

  it('never encodes the event stream', async () => {
    const stream = await raw('GET', '/api/v1/events/stream', { 'accept-encoding': 'br, gzip' });
    expect(stream.status).toBe(200);
    expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(stream.headers['content-encoding']).toBeUndefined();
    expect(stream.bytes.toString('utf8')).toMatch(/^:/);
  });

  it('compresses a replayed answer (Idempotency-Key) as the first one', async () => {
    const body = {
      agentIds: ['agent-default'],
      modelId: 'model-default',
      title: 'Keyed',
      tags: Array.from({ length: 40 }, (_, i) => `tag-number-${i}`),
    };
    const headers = { 'accept-encoding': 'gzip', 'idempotency-key': 'compression-replay-1' };
    const first = await raw('POST', '/api/v1/chats', headers, body);
    const again = await raw('POST', '/api/v1/chats', headers, body);
    expect([first.status, again.status]).toEqual([201, 201]);
    expect([first.headers['content-encoding'], again.headers['content-encoding']]).toEqual(['gzip', 'gzip']);
    expect(decoded(again)).toEqual(decoded(first));
  });
});

describe('acceptedEncoding', () => {
  it('prefers br, then gzip; q=0 refuses; anything else is identity', () => {
    expect(
      [
        'br',
        'gzip, br',
        'GZIP',
        'gzip;q=0, br',
        'br;q=0, gzip;q=0.5',
        'br;q=0,gzip;q=0',
        'compress',
        '',
        undefined,
      ].map(acceptedEncoding),
    ).toEqual(['br', 'br', 'gzip', 'br', 'gzip', 'identity', 'identity', 'identity', 'identity']);
  });
});
