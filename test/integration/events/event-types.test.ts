/**
 * Every event type the API emits, as one connected client (ephemeral=true) sees it: the exact
 * payloads of §6.2 (and the operation sections of §5), the envelope of §2.12, and persisted
 * ids that are the log's. Each operation waits for its events before the next one, so the
 * whole sequence (ephemeral events included) is deterministic.
 */
import { describe, expect, it } from '@jest/globals';
import { readEvents } from '../../support/events.js';
import type { SseConnection, SseEvent } from '../../support/sse.js';
import {
  EPHEMERAL_TYPES,
  expectWellFramed,
  ISO,
  lastLoggedId,
  logAfter,
  ok,
  persisted,
  streamsApi,
} from './support.js';

const { api, s } = streamsApi();

describe('event types and payloads (§6.2)', () => {
  it('delivers every event type with its exact payload, in emission order, with the log ids', async () => {
    const before = await lastLoggedId(api);
    const c: SseConnection = await s.open('?ephemeral=true');
    const startedAt = new Date().toISOString();
    let seen = 0;
    /** Runs an operation and returns the `count` events it produced, once they arrived. */
    const expectEvents = async (count: number, operation: () => Promise<unknown>): Promise<SseEvent[]> => {
      await operation();
      await c.waitFor((x) => x.events().length >= seen + count, 5000);
      const got = c.events().slice(seen, seen + count);
      seen += count;
      return got;
    };
    const typed = (events: SseEvent[]) => events.map((e) => ({ type: e.event, payload: e.data.payload }));
    /** Starts an agent stream in `chatId` and waits for its message.created. */
    const startStream = async (chatId: string) => {
      let message: any;
      await expectEvents(1, async () => {
        message = ok(
          await api.post(`/api/v1/chats/${chatId}/messages`, { role: 'agent', senderId: 'assistant', streaming: true }),
        ).body;
      });
      return message;
    };
    /** The message.streaming.complete of an agent message of `chat`. */
    const streamCompleted = (messageId: string, streamState: string, finalText: string | null) => ({
      type: 'message.streaming.complete',
      payload: { chatId: chat.id, messageId, role: 'agent', streamState, finalText },
    });

    // chat.created, without and with a first message.
    let chat: any;
    const created = await expectEvents(1, async () => {
      chat = ok(await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' })).body;
    });
    expect(typed(created)).toEqual([{ type: 'chat.created', payload: { chatId: chat.id } }]);
    expect(created[0]!.data.timestamp).toBe(chat.created_at);

    let withFirst: any;
    const createdWithFirst = await expectEvents(2, async () => {
      withFirst = ok(
        await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm', firstMessage: '  Hello there  ' }),
      ).body;
    });
    const [firstMessage] = ok(await api.get(`/api/v1/chats/${withFirst.id}/messages`)).body.data;
    expect(typed(createdWithFirst)).toEqual([
      { type: 'chat.created', payload: { chatId: withFirst.id } },
      {
        type: 'message.created',
        payload: {
          chatId: withFirst.id,
          messageId: firstMessage.id,
          role: 'user',
          senderId: 'user:primary',
          streamState: 'complete',
          contentFinal: 'Hello there',
          createdAt: withFirst.created_at,
        },
      },
    ]);
    // The first message's event has no trace key at all (not even null).
    expect('trace' in createdWithFirst[1]!.data.payload).toBe(false);

    // Chat state changes.
    expect(
      typed(await expectEvents(1, async () => ok(await api.patch(`/api/v1/chats/${chat.id}`, { title: 'Renamed' })))),
    ).toEqual([{ type: 'chat.updated', payload: { chatId: chat.id } }]);
    expect(typed(await expectEvents(1, async () => ok(await api.post(`/api/v1/chats/${chat.id}/archive`))))).toEqual([
      { type: 'chat.archived', payload: { chatId: chat.id } },
    ]);
    expect(typed(await expectEvents(1, async () => ok(await api.post(`/api/v1/chats/${chat.id}/unarchive`))))).toEqual([
      { type: 'chat.unarchived', payload: { chatId: chat.id } },
    ]);
    expect(
      typed(await expectEvents(1, async () => ok(await api.post(`/api/v1/chats/${chat.id}/mark-unread`)))),
    ).toEqual([{ type: 'chat.unread', payload: { chatId: chat.id } }]);
    expect(typed(await expectEvents(1, async () => ok(await api.post(`/api/v1/chats/${chat.id}/mark-read`))))).toEqual([
      { type: 'chat.read', payload: { chatId: chat.id } },
    ]);

    // Typing indicators (ephemeral).
    expect(
      typed(
        await expectEvents(1, async () =>
          ok(await api.post(`/api/v1/chats/${chat.id}/typing`, { agentId: 'assistant' })),
        ),
      ),
    ).toEqual([{ type: 'chat.typing', payload: { chatId: chat.id, agentId: 'assistant' } }]);
    expect(
      typed(await expectEvents(1, async () => ok(await api.post(`/api/v1/chats/${chat.id}/user-typing`)))),
    ).toEqual([{ type: 'chat.user_typing', payload: { chatId: chat.id, senderId: 'user:primary' } }]);

    // message.created: a complete agent message with a trace, a user message without one.
    let agentMessage: any;
    const agentCreated = await expectEvents(1, async () => {
      agentMessage = ok(
        await api.post(`/api/v1/chats/${chat.id}/messages`, {
          role: 'agent',
          senderId: 'assistant',
          content: ' Done. ',
          trace: { step: 3, tool: 'x' },
        }),
      ).body;
    });
    expect(typed(agentCreated)).toEqual([
      {
        type: 'message.created',
        payload: {
          chatId: chat.id,
          messageId: agentMessage.id,
          role: 'agent',
          senderId: 'assistant',
          streamState: 'complete',
          contentFinal: 'Done.',
          createdAt: agentMessage.created_at,
          trace: { step: 3, tool: 'x' },
        },
      },
    ]);
    let userMessage: any;
    const userCreated = await expectEvents(1, async () => {
      userMessage = ok(await api.post(`/api/v1/chats/${chat.id}/messages`, { role: 'user', content: 'Thanks' })).body;
    });
    expect(typed(userCreated)).toEqual([
      {
        type: 'message.created',
        payload: {
          chatId: chat.id,
          messageId: userMessage.id,
          role: 'user',
          senderId: 'user:primary',
          streamState: 'complete',
          contentFinal: 'Thanks',
          createdAt: userMessage.created_at,
          trace: null,
        },
      },
    ]);

    // A stream: message.created (streaming), chunks (ephemeral), then complete.
    let streamed: any;
    const streamStart = await expectEvents(1, async () => {
      streamed = ok(
        await api.post(`/api/v1/chats/${chat.id}/messages`, { role: 'agent', senderId: 'assistant', streaming: true }),
      ).body;
    });
    expect(typed(streamStart)).toEqual([
      {
        type: 'message.created',
        payload: {
          chatId: chat.id,
          messageId: streamed.id,
          role: 'agent',
          senderId: 'assistant',
          streamState: 'streaming',
          contentFinal: null,
          createdAt: streamed.created_at,
          trace: null,
        },
      },
    ]);
    for (const deltaText of ['Hel', 'lo ', ' ']) {
      expect(
        typed(
          await expectEvents(1, async () =>
            ok(await api.post(`/api/v1/messages/${streamed.id}/chunks`, { deltaText })),
          ),
        ),
      ).toEqual([{ type: 'message.streaming.chunk', payload: { chatId: chat.id, messageId: streamed.id, deltaText } }]);
    }
    let completed: any;
    const complete = await expectEvents(1, async () => {
      completed = ok(await api.post(`/api/v1/messages/${streamed.id}/complete`)).body;
    });
    expect(completed.content_final).toBe('Hello  ');
    expect(typed(complete)).toEqual([streamCompleted(streamed.id, 'complete', 'Hello  ')]);

    // A stream completed with an explicit finalText, and one cancelled.
    const second = await startStream(chat.id);
    expect(
      typed(
        await expectEvents(1, async () =>
          ok(await api.post(`/api/v1/messages/${second.id}/complete`, { finalText: ' Final ' })),
        ),
      ),
    ).toEqual([streamCompleted(second.id, 'complete', ' Final ')]);
    const third = await startStream(chat.id);
    await expectEvents(1, async () =>
      ok(await api.post(`/api/v1/messages/${third.id}/chunks`, { deltaText: 'partial' })),
    );
    expect(typed(await expectEvents(1, async () => ok(await api.post(`/api/v1/messages/${third.id}/cancel`))))).toEqual(
      [streamCompleted(third.id, 'cancelled', null)],
    );
    // Bulk cancel: one event per message (the role key is optional on this path, §5.4.6).
    const fourth = await startStream(chat.id);
    const bulk = await expectEvents(1, async () =>
      ok(await api.post(`/api/v1/chats/${chat.id}/messages/cancel-streaming`)),
    );
    const { role, ...bulkPayload } = bulk[0]!.data.payload;
    expect(bulk[0]!.event).toBe('message.streaming.complete');
    expect(bulkPayload).toEqual({ chatId: chat.id, messageId: fourth.id, streamState: 'cancelled', finalText: null });
    expect([undefined, 'agent']).toContain(role);

    // Interactive requests: created, resolved; created, cancelled.
    const choice = { type: 'choice', title: ' Approve? ', config: { options: [{ id: 'a', label: 'A' }] } };
    let request: any;
    const requestCreated = await expectEvents(1, async () => {
      request = ok(
        await api.post(`/api/v1/chats/${chat.id}/requests`, { ...choice, trace: { workflow: 'deploy' } }),
      ).body;
    });
    expect(typed(requestCreated)).toEqual([
      {
        type: 'request.created',
        payload: { chatId: chat.id, requestId: request.id, type: 'choice', title: 'Approve?' },
      },
    ]);
    const resolved = await expectEvents(1, async () =>
      ok(await api.post(`/api/v1/requests/${request.id}/resolve`, { selectedOptionIds: ['a'] })),
    );
    expect(typed(resolved)).toEqual([
      {
        type: 'request.resolved',
        payload: {
          chatId: chat.id,
          requestId: request.id,
          type: 'choice',
          title: 'Approve?',
          status: 'resolved',
          senderId: 'user',
          resolution_payload: { selectedOptionIds: ['a'] },
          resolutionPayload: { selectedOptionIds: ['a'] },
          trace: { workflow: 'deploy' },
        },
      },
    ]);
    let other: any;
    await expectEvents(1, async () => {
      other = ok(await api.post(`/api/v1/chats/${chat.id}/requests`, choice)).body;
    });
    expect(typed(await expectEvents(1, async () => ok(await api.post(`/api/v1/requests/${other.id}/cancel`))))).toEqual(
      [
        {
          type: 'request.cancelled',
          payload: {
            chatId: chat.id,
            requestId: other.id,
            type: 'choice',
            status: 'cancelled',
            resolution_payload: null,
            trace: null,
          },
        },
      ],
    );

    // Nothing else arrived, every frame is a well-formed envelope with a plausible timestamp.
    expect(c.events()).toHaveLength(seen);
    expectWellFramed(c);
    const finishedAt = new Date().toISOString();
    for (const e of c.events()) {
      expect(e.data.timestamp >= startedAt.slice(0, 19)).toBe(true);
      expect(e.data.timestamp <= finishedAt).toBe(true);
      expect(e.data.timestamp).toMatch(ISO);
    }
    const types = new Set(c.events().map((e) => e.event));
    expect([...types].sort()).toEqual(
      [
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
      ].sort(),
    );

    // Persisted events are exactly the log written after the connection, ids and all.
    const log = await logAfter(api, before);
    expect(persisted(c).map((e) => e.data)).toEqual(
      log.map((e) => ({ id: e.id, type: e.type, timestamp: e.timestamp, payload: e.payload })),
    );
    // Ephemeral events carry ids that are not in the log.
    const logIds = new Set((await readEvents(api.tableName)).map((e) => e.id));
    for (const e of c.events().filter((x) => EPHEMERAL_TYPES.includes(x.event))) expect(logIds.has(e.id)).toBe(false);
    c.close();
  });
});
