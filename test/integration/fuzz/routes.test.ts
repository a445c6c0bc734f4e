/**
 * Schema-driven fuzzing of every route in the route table (issue 17). For each route, bodies,
 * query strings and path parameters are generated from the handler's own zod schemas (and a valid
 * seed body where the route needs configured ids), then made hostile one part at a time: sizes
 * past every limit, encodings, prototype keys, nesting, numbers at the edges, wrong types,
 * missing fields, broken JSON and content types. Every answer must be
 * - below 500;
 * - for an error, the contract's envelope (§1.7): JSON, `{ error: { code, message, details } }`
 *   with a contract code and `details` an object or null;
 * - for a 4xx, free of effects: the table is scanned before and after, and must be unchanged.
 *   Two kinds of item are bookkeeping, not state, and are left out: rate-limit windows (§1.12
 *   counts requests that fail validation) and voided event numbers (a write reserves its events'
 *   sequence numbers before its transaction; when the transaction fails, e.g. on an unknown chat,
 *   it marks them void so SSE readers skip the hole at once: ARCHITECTURE.md "Events and SSE").
 *   The voided numbers are counted and printed.
 *
 * `FUZZ_PER_ROUTE` (default 6) sets the requests per route and `FUZZ_SEED` the random seed, so a
 * failure reproduces: `FUZZ_PER_ROUTE=200 FUZZ_SEED=7 npx jest test/integration/fuzz/routes.test.ts`.
 * The summary (requests, statuses, findings) is printed at the end.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { ddb } from '../../../functions/store/db.js';
import { apiRoutes } from '../../../lib/routes.js';
import type { RouteSpec } from '../../../lib/routes.js';
import { oneAgentConfig, useApi } from '../../support/api.js';
import { seeded } from '../../support/random.js';

const PER_ROUTE = Number(process.env.FUZZ_PER_ROUTE ?? 6);
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 1_000_000);

// Claims without a waitMs wait claimWaitMs (10 s by default): none here, to keep the run short.
const api = useApi({ config: { ...oneAgentConfig, server: { dispatch: { claimWaitMs: 0 } } } });

// ---------------------------------------------------------------------------------------------
// Randomness (seeded, so a failure reproduces with its FUZZ_SEED)
// ---------------------------------------------------------------------------------------------

const random = seeded(SEED);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const chance = (p: number) => random() < p;

// ---------------------------------------------------------------------------------------------
// Values: plausible ones from a zod schema, hostile ones from a catalogue
// ---------------------------------------------------------------------------------------------

/** A JSON fragment inserted verbatim (what JSON.stringify cannot produce: 1e999, __proto__, depth). */
class Raw {
  constructor(readonly json: string) {}
}

const deep = (n: number) => new Raw(`${'['.repeat(n)}${']'.repeat(n)}`);

const HOSTILE: readonly (() => unknown)[] = [
  () => 'x'.repeat(420_000),
  () => 'é'.repeat(210_001),
  () => 'a'.repeat(1_100),
  () => '',
  () => ' \t\n ',
  () => '\u0000\u0001\u001f',
  () => '\ud800',
  () => '😀'.repeat(100),
  () => '%E0%A4%A',
  () => '../../etc/passwd',
  () => '<script>alert(1)</script>',
  () => 'constructor',
  () => '__proto__',
  () => 9007199254740991,
  () => 9007199254740993,
  () => -9007199254740993,
  () => 1e308,
  () => -1e308,
  () => 5e-324,
  () => -0,
  () => 0.5,
  () => -1,
  () => new Raw('1e999'),
  () => new Raw('-1e999'),
  () => null,
  () => true,
  () => [],
  () => {},
  () => ({ a: 1 }),
  () => Array.from({ length: 100_000 }, () => 'assistant'),
  () => Array.from({ length: 2_000 }, (_, i) => `t${i}`),
  () => new Raw('{"__proto__":{"polluted":1}}'),
  () => new Raw('{"constructor":{"name":"Set"},"toString":1}'),
  () => new Raw('{"":1}'),
  () => new Raw('{"a":{"__proto__":[1]}}'),
  () => deep(31),
  () => deep(100_000),
  () => ({ mediaIds: ['x'.repeat(2_000)], kind: 'image' }),
  () => ({ mediaId: 5, kind: 'nope' }),
];

/** The schema under optional/nullable/default/pipe/readonly wrappers (the input side of a pipe). */
function unwrap(schema: z.ZodType): z.ZodType {
  let s = schema as z.ZodType & { _zod: { def: Record<string, any> } };
  for (let i = 0; i < 20; i++) {
    const def = s._zod.def;
    if (['optional', 'nullable', 'default', 'readonly', 'catch', 'nonoptional', 'prefault'].includes(def.type))
      s = def.innerType;
    else if (def.type === 'pipe') s = def.in;
    else break;
  }
  return s;
}

const PLAUSIBLE_STRINGS = ['a', 'hello world', 'assistant', 'm', 'user:primary', 'tag', 'AAAAAAAAAAAAAAAAAAAAA'];

/** A value the schema would plausibly accept (it may not: the rules decide the rest). */
function plausible(schema: z.ZodType, depth = 0): unknown {
  const s = unwrap(schema);
  const def = (s as unknown as { _zod: { def: Record<string, any> } })._zod.def;
  switch (def.type) {
    case 'string':
      return pick(PLAUSIBLE_STRINGS);
    case 'number':
    case 'int':
      return pick([0, 1, 10, 1000, 60_000]);
    case 'boolean':
      return chance(0.5);
    case 'enum':
      return pick(Object.values(def.entries as Record<string, unknown>));
    case 'literal':
      return pick(def.values as unknown[]);
    case 'array':
      return depth > 3
        ? []
        : Array.from({ length: Math.floor(random() * 3) + 1 }, () => plausible(def.element, depth + 1));
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [key, field] of Object.entries(def.shape as Record<string, z.ZodType>))
        if (chance(0.8)) out[key] = plausible(field, depth + 1);
      return out;
    }
    case 'record':
      return depth > 3 ? {} : { [pick(['a', 'kind', 'mediaIds'])]: plausible(def.valueType, depth + 1) };
    case 'union':
      return plausible(pick(def.options as z.ZodType[]), depth);
    default:
      return pick([{ a: 1 }, 'x', [1], 1, { kind: 'note' }]);
  }
}

/** Field names of an object schema (its input side). */
function shapeOf(schema: z.ZodType | undefined): Record<string, z.ZodType> {
  if (!schema) return {};
  const s = unwrap(schema) as unknown as { _zod: { def: Record<string, any> } };
  return s._zod.def.type === 'object' ? (s._zod.def.shape as Record<string, z.ZodType>) : {};
}

/** JSON text, with Raw fragments inserted verbatim. */
function toJson(value: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (v instanceof Raw) {
      raws.push(v.json);
      return `\u0000RAW${raws.length - 1}\u0000`;
    }
    return v;
  });
  return (text ?? 'null').replace(/"\\u0000RAW(\d+)\\u0000"/g, (_, i: string) => raws[Number(i)]!);
}

// ---------------------------------------------------------------------------------------------
// Fixtures: ids that exist, so the fuzz reaches past the 404s
// ---------------------------------------------------------------------------------------------

interface Fixtures {
  chatId: string;
  messageId: string;
  requestId: string;
  mediaId: string;
  uploadId: string;
}
let fixtures: Fixtures;

/** Valid bodies for routes whose rules need configured or existing values; mutated from there. */
function seedBody(route: RouteSpec): Record<string, unknown> | undefined {
  switch (route.handler) {
    case 'chats/create':
      return { agentIds: ['assistant'], modelId: 'm', title: 'Fuzz', tags: ['fuzz'], firstMessage: 'hello' };
    case 'chats/update':
      return { title: 'Renamed', tags: ['a', 'b'], pinned: true, modelId: 'm', notificationsMuted: false };
    case 'chats/typing':
      return { agentId: 'assistant' };
    case 'messages/create':
      return pick([
        { role: 'user', content: 'hi', trace: { note: 1 } },
        { role: 'agent', senderId: 'assistant', content: 'hello', trace: { kind: 'x' } },
        { role: 'agent', senderId: 'assistant', streaming: true },
      ]);
    case 'messages/chunk':
      return { deltaText: 'more' };
    case 'messages/complete':
      return { finalText: 'done' };
    case 'requests/create':
      return pick([
        { type: 'choice', title: 'Pick', config: { options: [{ id: 'a', label: 'A' }] }, trace: { t: 1 } },
        { type: 'text_input', title: 'Say', body: 'b', config: { validation: { maxLength: 10 } } },
        { type: 'form', title: 'Fill', config: { fields: [{ name: 'n', type: 'text', required: true }] } },
      ]);
    case 'requests/update':
      return { title: 'T2', body: null, trace: { u: 2 } };
    case 'requests/resolve':
      return { text: 'answer' };
    case 'dispatch/claim':
    case 'dispatch/claim-many':
      return { workerId: 'w1', waitMs: 0, leaseMs: 5_000 };
    case 'dispatch/heartbeat':
      return { workerId: 'w1', extendMs: 5_000 };
    case 'dispatch/complete':
      return { workerId: 'w1' };
    case 'dispatch/fail':
      return { workerId: 'w1', reason: 'boom', retryable: true, retryDelayMs: 100 };
    case 'media/upload':
      return { fileName: 'a.txt', contentType: 'text/plain', base64Data: Buffer.from('hi').toString('base64') };
    case 'media/upload-session':
      return { fileName: 'big.bin', contentType: 'application/octet-stream', size: 1024 };
    default:
      return undefined;
  }
}

const PATH_VALUES: Record<string, () => string> = {
  chatId: () => fixtures.chatId,
  messageId: () => fixtures.messageId,
  requestId: () => fixtures.requestId,
  mediaId: () => fixtures.mediaId,
  uploadId: () => fixtures.uploadId,
  batchId: () => 'BBBBBBBBBBBBBBBBBBBBB',
};

/** A path segment: the fixture, an unknown id, or hostile (already percent-encoded as sent). */
function pathValue(name: string): string {
  // Half the time the fixture, so the fuzz reaches the rules behind the 404.
  if (chance(0.5)) return encodeURIComponent(PATH_VALUES[name]?.() ?? 'x');
  return pick([
    () => 'ZZZZZZZZZZZZZZZZZZZZZ',
    () => 'a'.repeat(2_000),
    () => '%E0%A4%A',
    () => '%ED%A0%80',
    () => '%00',
    () => encodeURIComponent('é中😀'),
    () => '..',
    () => '%2F%2F',
    () => encodeURIComponent(' '),
    () => encodeURIComponent('__proto__'),
  ])();
}

const QUERY_HOSTILE = ['', '-1', '0', '101', '1e3', '1.5', 'true', 'maybe', 'x'.repeat(5_000), '%', '__proto__', 'é中'];

function queryString(schema: z.ZodType | undefined): string {
  const params: string[] = [];
  for (const name of Object.keys(shapeOf(schema))) {
    if (!chance(0.6)) continue;
    const value = chance(0.5) ? pick(QUERY_HOSTILE) : pick(['1', '10', 'true', 'false', 'a', 'all', 'chats']);
    params.push(`${name}=${encodeURIComponent(value)}`);
  }
  if (chance(0.1)) params.push('cursor=' + encodeURIComponent(pick(['eyJ4IjoxfQ', '!!!', 'a'.repeat(3_000)])));
  if (chance(0.05)) params.push('%=%&==&a=%E0%A4%A');
  if (chance(0.05)) params.push('__proto__=x&constructor=y&limit=1&limit=2');
  return params.length > 0 ? `?${params.join('&')}` : '';
}

interface Fuzzed {
  method: string;
  path: string;
  body?: string | Uint8Array;
  headers: Record<string, string>;
  variant: string;
}

/** Every [object or array, key] below the top level of `body` (where an inner value can be swapped). */
function innerPaths(body: Record<string, unknown>): [Record<string, unknown>, string][] {
  const out: [Record<string, unknown>, string][] = [];
  const stack: unknown[] = Object.values(body);
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null || v instanceof Raw) continue;
    for (const [key, child] of Object.entries(v)) {
      out.push([v as Record<string, unknown>, key]);
      stack.push(child);
    }
  }
  return out;
}

/** One request for `route`: a plausible body made hostile in one way (or, sometimes, left valid). */
function fuzz(route: RouteSpec, schemas: { body?: z.ZodType; query?: z.ZodType }): Fuzzed {
  const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => pathValue(name)) + queryString(schemas.query);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (route.method === 'GET' || route.method === 'DELETE') {
    return { method: route.method, path, headers, variant: 'query/path' };
  }
  const shape = shapeOf(schemas.body);
  const body: Record<string, unknown> = { ...((plausible(schemas.body ?? z.object({})) as object) ?? {}) };
  Object.assign(body, seedBody(route) ?? {});
  // Dispatch claims long-poll up to 25 s: keep them short (the wait cap is the dispatch tests').
  const claims = route.handler.startsWith('dispatch/claim');
  let variant = 'valid';
  const fields = Object.keys(shape);
  const kind = random();
  const inner = innerPaths(body);
  if (kind < 0.15 && inner.length > 0) {
    // Deep inside a valid body (a config option's label, a trace's media ids…).
    const [holder, key] = pick(inner);
    Object.defineProperty(holder, key, {
      value: pick(HOSTILE)(),
      enumerable: true,
      writable: true,
      configurable: true,
    });
    variant = `inner ${key}`;
  } else if (kind < 0.5 && fields.length > 0) {
    const field = pick(fields);
    const hostile = pick(HOSTILE)();
    body[field] = claims && field === 'waitMs' && typeof hostile === 'number' && hostile > 0 ? 0 : hostile;
    variant = `field ${field}`;
  } else if (kind < 0.6 && fields.length > 0) {
    delete body[pick(fields)];
    variant = 'missing field';
  } else if (kind < 0.7) {
    // An own key, `__proto__` included (an assignment would set the prototype instead).
    const key = pick(['__proto__', 'constructor', 'toString', 'extra']);
    Object.defineProperty(body, key, { value: pick(HOSTILE)(), enumerable: true, writable: true, configurable: true });
    variant = `extra key ${key}`;
  } else if (kind < 0.8) {
    const raw = pick(['', 'null', '[]', '"s"', '{', '{"a":1', '1', 'true', '{"a":1}{}', '\uFEFF{}']);
    return { method: route.method, path, body: raw, headers, variant: `raw ${JSON.stringify(raw)}` };
  } else if (kind < 0.85) {
    const bytes = Uint8Array.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x7d]);
    return { method: route.method, path, body: bytes, headers, variant: 'invalid UTF-8' };
  } else if (kind < 0.9) {
    headers['content-type'] = pick(['text/plain', 'application/json; charset=latin1', 'multipart/form-data', '']);
    variant = `content-type ${headers['content-type']}`;
  } else if (kind < 0.95) {
    headers['idempotency-key'] = pick(['k'.repeat(300), '   ', `fuzz-${Math.floor(random() * 1e9)}`, 'é']);
    variant = 'idempotency-key';
  }
  if (claims && typeof body.waitMs === 'number' && body.waitMs > 0) body.waitMs = 0;
  return { method: route.method, path, body: toJson(body), headers, variant };
}

// ---------------------------------------------------------------------------------------------
// The table, before and after
// ---------------------------------------------------------------------------------------------

/** Every item of the test's table but the bookkeeping the header describes. */
async function snapshot(): Promise<Map<string, string>> {
  const items = new Map<string, string>();
  let start: Record<string, unknown> | undefined;
  do {
    const out = await ddb().send(
      new ScanCommand({ TableName: api.tableName, ConsistentRead: true, ExclusiveStartKey: start }),
    );
    for (const item of out.Items ?? []) {
      if (String(item.pk).startsWith('RL#') || String(item.pk) === 'SEQ') continue;
      if (item.type === 'event' && item.void === true) {
        voided.add(`${String(item.pk)} ${String(item.sk)}`);
        continue;
      }
      items.set(`${String(item.pk)} ${String(item.sk)}`, JSON.stringify(item));
    }
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

function differences(before: Map<string, string>, after: Map<string, string>): string[] {
  const out: string[] = [];
  for (const [key, value] of after)
    if (before.get(key) !== value) out.push(before.has(key) ? `changed ${key}` : `added ${key}`);
  for (const key of before.keys()) if (!after.has(key)) out.push(`removed ${key}`);
  return out;
}

const CODES: Record<number, string> = {
  400: 'VALIDATION_ERROR',
  401: 'UNAUTHORIZED',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMIT_ERROR',
};

/** What is wrong with an error answer's envelope (§1.7), or undefined. */
function envelopeProblem(status: number, contentType: string | null, text: string): string | undefined {
  if (!contentType?.startsWith('application/json')) return `content-type ${contentType}`;
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    return 'body is no JSON';
  }
  const error = body?.error;
  if (!error || typeof error.message !== 'string' || !('details' in error)) return 'no { code, message, details }';
  if (error.code !== CODES[status]) return `code ${error.code} for ${status}`;
  if (error.details !== null && (typeof error.details !== 'object' || Array.isArray(error.details)))
    return 'details neither object nor null';
  if (Object.keys(body).length !== 1 || Object.keys(error).length !== 3) return 'extra keys';
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------------------------

const summary = { requests: 0, byStatus: {} as Record<number, number>, serverErrors: 0, envelope: 0, changes: 0 };
const voided = new Set<string>();
/** The table as the last request left it. */
let current: Map<string, string> | undefined;

afterAll(() => {
  console.log(
    `fuzz: seed ${SEED}, ${summary.requests} requests over ${apiRoutes.length} routes ` +
      `(${PER_ROUTE} per route), statuses ${JSON.stringify(summary.byStatus)}, ` +
      `5xx ${summary.serverErrors}, envelope problems ${summary.envelope}, ` +
      `state changes after 4xx ${summary.changes}, voided event numbers ${voided.size}`,
  );
});

async function send(request: Fuzzed): Promise<{ status: number; contentType: string | null; text: string }> {
  const res = await fetch(`${api.url}${request.path}`, {
    method: request.method,
    headers: request.headers,
    ...(request.body !== undefined ? { body: request.body } : {}),
  });
  return { status: res.status, contentType: res.headers.get('content-type'), text: await res.text() };
}

describe(`fuzzing every route (seed ${SEED}, ${PER_ROUTE} per route)`, () => {
  it('sets up a chat, a streaming message, a request, a medium, an upload session and the cursor key', async () => {
    const chat = await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm', tags: ['fuzz'] });
    const message = await api.post(`/api/v1/chats/${chat.body.id}/messages`, {
      role: 'agent',
      senderId: 'assistant',
      streaming: true,
    });
    const request = await api.post(`/api/v1/chats/${chat.body.id}/requests`, {
      type: 'text_input',
      title: 'Q',
      config: {},
    });
    const png = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
      'base64',
    );
    const media = await api.post(`/api/v1/chats/${chat.body.id}/media`, {
      fileName: 'p.png',
      contentType: 'image/png',
      base64Data: png.toString('base64'),
    });
    const upload = await api.post(`/api/v1/chats/${chat.body.id}/media/uploads`, {
      fileName: 'big.bin',
      contentType: 'application/octet-stream',
      size: 1024,
    });
    expect([chat.status, message.status, request.status, media.status]).toEqual([201, 201, 201, 201]);
    // The cursor-signing key is made on first use (by any cursor, valid or not): make it now, so
    // the first fuzzed cursor does not count as a change.
    expect((await api.get('/api/v1/chats?cursor=first')).status).toBe(400);
    fixtures = {
      chatId: chat.body.id,
      messageId: message.body.id,
      requestId: request.body.id,
      mediaId: media.body.id,
      uploadId: upload.body?.uploadId ?? upload.body?.id ?? 'UUUUUUUUUUUUUUUUUUUUU',
    };
  });

  // The admin route last: a valid body there may change the instance configuration. The event
  // stream is left out: a valid request streams until its lifetime (test/integration/events covers
  // its refusals).
  const ordered = apiRoutes
    .slice()
    .sort((a, b) => Number(a.handler === 'config/admin') - Number(b.handler === 'config/admin'));
  for (const route of ordered) {
    it(`${route.method} ${route.path}: no 5xx, the envelope on every error, nothing changed by a 4xx`, async () => {
      const module = (await import(`../../../functions/http/${route.handler}.js`)) as {
        schemas?: { body?: z.ZodType; query?: z.ZodType };
        documented?: { body?: z.ZodType };
      };
      const schemas = { ...module.schemas, ...(module.documented?.body ? { body: module.documented.body } : {}) };
      const serverErrors: string[] = [];
      const envelopeProblems: string[] = [];
      const stateChanges: string[] = [];
      for (let i = 0; i < PER_ROUTE; i++) {
        const request = fuzz(route, schemas);
        const label = `${request.method} ${request.path.slice(0, 120)} [${request.variant}]`;
        const before = (current ??= await snapshot());
        const res = await send(request);
        // This request's "after" is the next one's "before": nothing else writes meanwhile (the
        // background jobs that could, dispatch and auto-rename, are off), so one scan per request.
        current = await snapshot();
        summary.requests++;
        summary.byStatus[res.status] = (summary.byStatus[res.status] ?? 0) + 1;
        if (res.status >= 500) serverErrors.push(`${res.status} ${label}: ${res.text.slice(0, 200)}`);
        if (res.status >= 400) {
          const problem = envelopeProblem(res.status, res.contentType, res.text);
          if (problem) envelopeProblems.push(`${res.status} ${label}: ${problem}`);
        }
        if (res.status >= 400 && res.status < 500) {
          const changed = differences(before, current);
          if (changed.length > 0) stateChanges.push(`${res.status} ${label}: ${changed.join(', ')}`);
        }
      }
      summary.serverErrors += serverErrors.length;
      summary.envelope += envelopeProblems.length;
      summary.changes += stateChanges.length;
      expect({ serverErrors, envelopeProblems, stateChanges }).toEqual({
        serverErrors: [],
        envelopeProblems: [],
        stateChanges: [],
      });
    });
  }
});
