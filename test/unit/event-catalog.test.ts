/**
 * The event catalog (functions/model/events.ts, contract §6): it lists exactly the types of §6.2,
 * each payload of §6.2 parses through its schema, readers narrow only what parses, writers' typos
 * fail the typecheck (the `@ts-expect-error` lines: `tsc -p .` checks tests), the API document
 * describes each type, and no other source file of the service spells an event type's name.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import ts from 'typescript';
import {
  EPHEMERAL_EVENT_TYPES,
  EVENTS,
  EVENT_DEFS,
  EVENT_TYPES,
  eventDefOf,
  isEvent,
} from '../../functions/model/events.js';
import type { NewEphemeralEvent, NewEvent, NewPersistedEvent } from '../../functions/model/events.js';
import { buildOpenApiDocument } from '../../lib/openapi/document.js';
import { DocumentCheck } from '../support/openapi-check.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const CATALOG = 'functions/model/events.ts';

/** §6.2's table, its first column, in its order (written from ../shared/CONTRACT.md). */
const CONTRACT_TYPES = [
  'chat.created',
  'chat.updated',
  'chat.archived',
  'chat.unarchived',
  'chat.read',
  'chat.unread',
  'chat.typing',
  'chat.user_typing',
  'message.created',
  'message.streaming.chunk',
  'message.streaming.complete',
  'request.created',
  'request.resolved',
  'request.cancelled',
  'media.attached',
  'request.reminder',
];
/** §6.1: "These are `chat.typing`, `chat.user_typing` and `message.streaming.chunk`." */
const CONTRACT_EPHEMERAL = ['chat.typing', 'chat.user_typing', 'message.streaming.chunk'];

const SHARED_CONTRACT = new URL('../../../shared/CONTRACT.md', import.meta.url);

/** The type names in the first column of §6.2's table, when the team's contract sits beside the project. */
function sharedContractTypes(): string[] | undefined {
  let text: string;
  try {
    text = readFileSync(SHARED_CONTRACT, 'utf8');
  } catch {
    return undefined;
  }
  const section = text.slice(text.indexOf('### 6.2 '), text.indexOf('### 6.3 '));
  return [...section.matchAll(/^\| `([a-z_.]+)` \|/gm)].map((m) => m[1]!);
}

const chatId = 'c'.repeat(21);
const messageId = 'm'.repeat(21);
const requestId = 'r'.repeat(21);
const at = '2025-05-02T09:20:11.456Z';

/** A payload of each type as §6.2 describes it (and as the service writes it). */
const SAMPLES: Record<string, Record<string, unknown>> = {
  'chat.created': { chatId },
  'chat.updated': { chatId },
  'chat.archived': { chatId },
  'chat.unarchived': { chatId },
  'chat.read': { chatId },
  'chat.unread': { chatId },
  'chat.typing': { chatId, agentId: 'assistant' },
  'chat.user_typing': { chatId, senderId: 'user:primary' },
  'message.created': {
    chatId,
    messageId,
    role: 'agent',
    senderId: 'assistant',
    streamState: 'complete',
    contentFinal: 'Done.',
    createdAt: at,
    trace: { runId: 'r1' },
  },
  'message.streaming.chunk': { chatId, messageId, deltaText: 'Hel' },
  'message.streaming.complete': {
    chatId,
    messageId,
    role: 'agent',
    streamState: 'cancelled',
    finalText: null,
  },
  'request.created': { chatId, requestId, type: 'choice', title: 'Ship it?' },
  'request.resolved': {
    chatId,
    requestId,
    type: 'choice',
    title: 'Ship it?',
    status: 'resolved',
    senderId: 'user',
    resolution_payload: { selectedOptionIds: ['yes'] },
    resolutionPayload: { selectedOptionIds: ['yes'] },
    trace: null,
  },
  'request.cancelled': {
    chatId,
    requestId,
    type: 'text_input',
    status: 'cancelled',
    resolution_payload: null,
    trace: null,
    reason: 'deadline',
  },
  'media.attached': { chatId, mediaId: 'd'.repeat(21), messageId: null, kind: 'audio' },
  'request.reminder': {
    chatId,
    requestId,
    type: 'form',
    title: 'Budget',
    deadlineAt: at,
    secondsLeft: 300,
  },
};

const stored = (type: string, payload: Record<string, unknown>) => ({ seq: 1, id: 'e', type, timestamp: at, payload });

describe('the event catalog', () => {
  it('lists exactly the event types of §6.2, in its order', () => {
    expect(EVENT_TYPES).toEqual(CONTRACT_TYPES);
    expect(EVENT_DEFS.map((d) => d.type)).toEqual(CONTRACT_TYPES);
  });

  it('keeps its copy of §6.2 equal to the shared contract when that is present', () => {
    const shared = sharedContractTypes();
    if (shared !== undefined) expect(shared).toEqual(CONTRACT_TYPES);
  });

  it('marks the three ephemeral types of §6.1 as ephemeral, and only them', () => {
    expect([...EPHEMERAL_EVENT_TYPES].sort()).toEqual([...CONTRACT_EPHEMERAL].sort());
    for (const type of CONTRACT_TYPES) {
      expect([type, eventDefOf(type)?.ephemeral]).toEqual([type, CONTRACT_EPHEMERAL.includes(type)]);
    }
    expect(eventDefOf('chat.deleted')).toBeUndefined();
  });

  it.each(CONTRACT_TYPES)('parses a representative %s payload through its schema, unchanged', (type) => {
    const payload = SAMPLES[type]!;
    const def = eventDefOf(type)!;
    expect(def.payload.parse(payload)).toEqual(payload);
    expect(isEvent(stored(type, payload), def)).toBe(true);
  });

  it('refuses a payload with a field missing or of the wrong type, and an event of another type', () => {
    const created = SAMPLES['message.created']!;
    const { messageId: _missing, ...withoutMessageId } = created;
    expect(isEvent(stored('message.created', withoutMessageId), EVENTS.messageCreated)).toBe(false);
    expect(isEvent(stored('message.created', { ...created, role: 'robot' }), EVENTS.messageCreated)).toBe(false);
    expect(isEvent(stored('message.created', { ...created, streamState: 'cancelled' }), EVENTS.messageCreated)).toBe(
      false,
    );
    expect(isEvent(stored('chat.updated', { chatId }), EVENTS.chatCreated)).toBe(false);
    expect(isEvent(stored('chat.user_typing', { chatId, senderId: 'assistant' }), EVENTS.chatUserTyping)).toBe(false);
    // A chat's first message carries no trace key (§6.2).
    const { trace: _absent, ...firstMessage } = created;
    expect(isEvent(stored('message.created', firstMessage), EVENTS.messageCreated)).toBe(true);
  });

  it('narrows to any of several entries, and leaves the stored payload object as it was', () => {
    const payload = SAMPLES['request.cancelled']!;
    const event = stored('request.cancelled', payload);
    expect(isEvent(event, EVENTS.requestCreated)).toBe(false);
    if (!isEvent(event, EVENTS.requestResolved, EVENTS.requestCancelled)) throw new Error('not narrowed');
    const status: 'resolved' | 'cancelled' = event.payload.status;
    expect(status).toBe('cancelled');
    expect(event.payload).toBe(payload);
    // Read, not rewritten: a field the schema does not name stays (the wire keeps its bytes).
    const extra = stored('chat.read', { chatId, futureField: 1 });
    expect(isEvent(extra, EVENTS.chatRead)).toBe(true);
    expect(extra.payload).toEqual({ chatId, futureField: 1 });
  });

  it("builds a writer's event from its entry, the payload as given", () => {
    const payload = { chatId };
    const event = EVENTS.chatUpdated.of(payload);
    expect(event).toEqual({ type: 'chat.updated', payload: { chatId } });
    expect(event.payload).toBe(payload);
    const attached = EVENTS.mediaAttached.of({ chatId, mediaId: messageId, messageId: null, kind: 'file' });
    const persisted: NewPersistedEvent[] = [event, attached];
    const ephemeral: NewEphemeralEvent = EVENTS.chatTyping.of({ chatId, agentId: 'assistant' });
    expect(persisted).toHaveLength(2);
    expect(ephemeral.type).toBe('chat.typing');
  });

  it('refuses at typecheck a misspelled type, a missing or mistyped field, and an ephemeral event in the log', () => {
    const cancelled = { chatId, messageId, role: 'agent', streamState: 'cancelled', finalText: null } as const;
    const typed: NewEvent[] = [{ type: 'message.streaming.complete', payload: cancelled }];
    const wrong: unknown[] = [
      // @ts-expect-error a type the catalog does not list
      { type: 'chat.updatd', payload: { chatId } } satisfies NewEvent,
      // @ts-expect-error agentId missing
      EVENTS.chatTyping.of({ chatId }),
      // @ts-expect-error role is one of §2.13's
      EVENTS.messageStreamingComplete.of({ ...cancelled, role: 'robot' }),
      // @ts-expect-error a stream ends complete or cancelled
      EVENTS.messageStreamingComplete.of({ ...cancelled, streamState: 'streaming' }),
      // @ts-expect-error the log takes persisted events only (§6.1)
      EVENTS.chatTyping.of({ chatId, agentId: 'a' }) satisfies NewPersistedEvent,
    ];
    expect([typed.length, wrong.length]).toEqual([1, 5]);
  });

  it('describes every event type in the API document: a component each, and Event, any of them by type', () => {
    const schemas = buildOpenApiDocument(new Map(), '0.0.0', []).components!.schemas! as Record<string, any>;
    const mapping = schemas.Event.discriminator.mapping as Record<string, string>;
    expect(Object.keys(mapping)).toEqual(CONTRACT_TYPES);
    expect(schemas.Event.oneOf).toHaveLength(CONTRACT_TYPES.length);
    for (const [type, ref] of Object.entries(mapping)) {
      const envelope = schemas[ref.replace('#/components/schemas/', '')];
      expect([type, envelope.required]).toEqual([type, ['id', 'type', 'timestamp', 'payload']]);
      expect([type, envelope.properties.type.const]).toEqual([type, type]);
      const fields = Object.keys(eventDefOf(type)!.payload.shape);
      expect([type, Object.keys(envelope.properties.payload.properties)]).toEqual([type, fields]);
    }
    expect(schemas.MessageCreatedEvent.properties.payload.required).not.toContain('trace');
  });

  it('describes the outbound webhooks (§6.6): one per persisted type, the payload enriched for three of them or else raw', () => {
    const doc = JSON.parse(JSON.stringify(buildOpenApiDocument(new Map(), '0.0.0', [])));
    const persisted = CONTRACT_TYPES.filter((t) => !EPHEMERAL_EVENT_TYPES.includes(t as never));
    expect(Object.keys(doc.webhooks)).toEqual(persisted);
    const check = new DocumentCheck(doc);
    const envelope = (type: string, payload: unknown) => ({ id: 'e'.repeat(21), type, timestamp: at, payload });
    // Every persisted type's own payload (the enriched ones' when the record is gone).
    expect(persisted.map((t) => check.webhookProblem(envelope(t, SAMPLES[t])))).toEqual(persisted.map(() => undefined));
    // §6.6's enriched payloads.
    const enrichedMessage = {
      chatId,
      agentIds: ['assistant'],
      messageId,
      senderId: 'assistant',
      role: 'agent',
      content: 'Done.',
      modelId: 'm',
      pendingRequestsCount: 0,
      trace: null,
    };
    const closed = {
      chatId,
      requestId,
      type: 'choice',
      resolutionPayload: { selectedOptionIds: ['yes'] },
      trace: null,
    };
    const enriched = [
      envelope('message.created', enrichedMessage),
      envelope('request.resolved', { ...closed, status: 'resolved' }),
      envelope('request.cancelled', { ...closed, status: 'cancelled', resolutionPayload: null, reason: 'deadline' }),
    ];
    expect(enriched.map((body) => check.webhookProblem(body))).toEqual([undefined, undefined, undefined]);
    // What is neither: a field missing, one added, a status of the other type, an ephemeral type.
    const { pendingRequestsCount: _, ...missing } = enrichedMessage;
    const wrong = [
      envelope('message.created', missing),
      envelope('message.created', { ...enrichedMessage, extra: 1 }),
      envelope('request.resolved', { ...closed, status: 'cancelled' }),
      envelope('chat.typing', SAMPLES['chat.typing']),
    ];
    expect(wrong.map((body) => check.webhookProblem(body) !== undefined)).toEqual([true, true, true, true]);
  });
});

/** Every TypeScript source file under `dir` (relative to the project root). */
function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && /\.(ts|tsx|mts)$/.test(entry.name) && !entry.name.endsWith('.d.ts'))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)));
}

/** The text of every string literal and template part in `file` (comments are not code: they may name events). */
function literalsOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node)) found.push(node.text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('event type names', () => {
  const spells = (text: string) =>
    CONTRACT_TYPES.filter((type) => new RegExp(`(^|[^\\w.])${type.replaceAll('.', '\\.')}($|[^\\w.])`).test(text));

  it('finds the names where they are spelled (the catalog spells each once)', () => {
    const names = literalsOf(CATALOG).flatMap(spells);
    expect(names.sort()).toEqual([...CONTRACT_TYPES].sort());
  });

  it('are spelled in no source file of the service but the catalog (functions/, lib/, local/, bin/)', () => {
    const files = ['functions', 'lib', 'local', 'bin'].flatMap(sourceFiles);
    expect(files.length).toBeGreaterThan(100);
    const spelled = files
      .filter((file) => file !== CATALOG)
      .flatMap((file) => literalsOf(file).flatMap((text) => spells(text).map((type) => `${file}: ${type}`)));
    expect(spelled).toEqual([]);
  });
});
