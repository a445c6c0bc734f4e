/**
 * A route's replies, declared beside it (functions/model/replies.ts): they type what its handler
 * returns (http(), functions/middleware/http.ts), and the API document takes its answers from
 * them (lib/openapi/document.ts).
 */
import { describe, expect, it } from '@jest/globals';
import { http } from '../../functions/middleware/http.js';
import type { Chat as ChatRecord } from '../../functions/model.js';
import { bytes, failure, json, noContent, preflight, redirect, stream } from '../../functions/model/replies.js';
import { Chat } from '../../functions/model/resources.js';
import * as z from '../../functions/platform/zod.js';
import { buildOpenApiDocument } from '../../lib/openapi/document.js';
import type { RouteSpec } from '../../lib/routes.js';

const chat = {} as ChatRecord;
const replies = { 200: json('The chat.', Chat), 204: noContent('Nothing.'), 409: failure('CONFLICT: taken.') };
const schemas = { path: z.object({ chatId: z.string() }), replies };

describe('a handler typed by its replies', () => {
  it('answers a declared status with the body its reply declares, and nothing else typechecks', () => {
    const built = [
      http('chats/get', schemas, async () => ({ status: 200, body: chat })),
      http('chats/get', schemas, async ({ path }) =>
        path.chatId ? { status: 200, body: chat } : { status: 204, remember: false },
      ),
      // @ts-expect-error 201 is not declared
      http('chats/get', schemas, async () => ({ status: 201, body: chat })),
      // @ts-expect-error a failure is thrown, never returned
      http('chats/get', schemas, async () => ({ status: 409 })),
      // @ts-expect-error the body is not a Chat
      http('chats/get', schemas, async () => ({ status: 200, body: { id: 'c' } })),
      // @ts-expect-error a 204 has no body
      http('chats/get', schemas, async () => ({ status: 204, body: chat })),
      // @ts-expect-error bytes are answered as `binary`
      http('files/get', { replies: { 200: bytes('Bytes.') } }, async () => ({ status: 200, body: 'x' })),
    ];
    expect(built.every((handler) => typeof handler === 'function')).toBe(true);
  });
});

const route: RouteSpec = { method: 'GET', path: '/api/v1/things/{thingId}', handler: 'things/get', writes: false };

describe('the API document from the replies', () => {
  it("takes each status from the route's replies: JSON, bytes, a stream, a redirect, no content, its own failures", () => {
    const doc = buildOpenApiDocument(
      new Map([
        [
          'things/get',
          {
            replies: {
              200: json('The chat.', Chat),
              206: bytes('Some bytes.', 'image/webp'),
              203: stream('A stream.', 'text/event-stream'),
              204: preflight(),
              307: redirect('Elsewhere.', 'The other place.'),
              416: noContent('No range.'),
              409: failure('CONFLICT: taken.'),
            },
          },
        ],
      ]),
      '0.0.0',
      [route],
    );
    const responses = doc.paths!['/api/v1/things/{thingId}']!.get!.responses as Record<string, any>;
    expect(responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Chat' });
    expect(responses['206'].content).toEqual({ 'image/webp': { schema: { type: 'string' } } });
    expect(responses['203'].content).toEqual({ 'text/event-stream': { schema: { type: 'string' } } });
    expect(responses['204']).toBeUndefined();
    expect(responses['307']).toEqual({
      description: 'Elsewhere.',
      headers: { Location: { required: true, schema: { type: 'string' }, description: 'The other place.' } },
    });
    expect(responses['416']).toEqual({ description: 'No range.' });
    expect(responses['409'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/ErrorEnvelope',
    });
  });

  it('refuses a route whose handler declares no replies, by name', () => {
    expect(() => buildOpenApiDocument(new Map([['things/get', {}]]), '0.0.0', [route])).toThrow(
      'Handler "things/get" declares no replies',
    );
  });
});
