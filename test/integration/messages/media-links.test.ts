/**
 * Messages that reference media through their trace (§5.4.1 checks 16–18, side effect 1,
 * §3.1 previews). Uploads arrive with the media issue, so this file puts media items in the
 * table the way an upload stores them.
 */
import { describe, expect, it } from '@jest/globals';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { ddb } from '../../../functions/store/db.js';
import { Keys } from '../../../functions/store/keys.js';
import { eventsSince, readEvents } from '../../support/events.js';
import { dispatchInputs } from '../../support/table.js';
import { oneAgentConfig, useApi } from '../../support/api.js';

const config = {
  ...oneAgentConfig,
  // One test reads the dispatch inputs user messages write: hold sealing off (it consumes them).
  server: { dispatch: { mode: 'batched_sequential', batchDebounceMs: 3_600_000, maxBatchWaitMs: 3_600_000 } },
};

const api = useApi({ config });

let counter = 0;
const newChat = async () => (await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' })).body;

async function putMedia(
  chatId: string,
  kind: 'image' | 'audio' | 'file',
  messageId: string | null = null,
): Promise<string> {
  const id = `media${String(counter++).padStart(16, '0')}`;
  await ddb().send(
    new PutCommand({
      TableName: api.tableName,
      Item: {
        ...Keys.media(id),
        type: 'media',
        id,
        chat_id: chatId,
        message_id: messageId,
        kind,
        filename: `${id}.bin`,
        created_at: new Date().toISOString(),
      },
    }),
  );
  return id;
}

const mediaItem = async (id: string) =>
  (await ddb().send(new GetCommand({ TableName: api.tableName, Key: Keys.media(id), ConsistentRead: true }))).Item;

describe('media references in a message trace', () => {
  it(
    'links every referenced medium, emits media.attached before message.created, and previews ' + '"Attachment"',
    async () => {
      const chat = await newChat();
      const img = await putMedia(chat.id, 'image');
      const doc = await putMedia(chat.id, 'file');
      const before = (await readEvents(api.tableName)).length;
      const res = await api.post(`/api/v1/chats/${chat.id}/messages`, {
        role: 'agent',
        senderId: 'assistant',
        trace: { mediaIds: [img, doc] },
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        content_final: null,
        stream_state: 'complete',
        trace: { mediaIds: [img, doc] },
      });
      expect((await mediaItem(img))?.message_id).toBe(res.body.id);
      expect((await mediaItem(doc))?.message_id).toBe(res.body.id);
      const events = await eventsSince(api.tableName, before);
      expect(events.map((e) => e.type)).toEqual(['media.attached', 'media.attached', 'message.created']);
      expect(events[0]!.payload).toEqual({ chatId: chat.id, mediaId: img, messageId: res.body.id, kind: 'image' });
      const after = (await api.get(`/api/v1/chats/${chat.id}`)).body;
      expect(after).toMatchObject({ last_message_preview: 'Attachment', last_message_role: 'agent', unread_count: 1 });
    },
  );

  it('previews a voice note, and keeps that preview through a full recompute', async () => {
    const chat = await newChat();
    const voice = await putMedia(chat.id, 'audio');
    const res = await api.post(`/api/v1/chats/${chat.id}/messages`, {
      role: 'user',
      content: '  ',
      trace: { mediaId: voice, kind: 'audio' },
    });
    expect(res.status).toBe(201);
    expect((await api.get(`/api/v1/chats/${chat.id}`)).body.last_message_preview).toBe('Voice note');
    await api.patch(`/api/v1/chats/${chat.id}`, { pinned: true });
    expect((await api.get(`/api/v1/chats/${chat.id}`)).body.last_message_preview).toBe('Voice note');
  });

  it(
    'rejects media of another chat, unknown media, media already linked and a legacy kind mismatch, creating ' +
      'nothing',
    async () => {
      const chat = await newChat();
      const other = await newChat();
      const foreign = await putMedia(other.id, 'image');
      const linked = await putMedia(chat.id, 'image', 'somemessageid00000000');
      const audio = await putMedia(chat.id, 'audio');
      const before = (await readEvents(api.tableName)).length;
      const cases: [Record<string, unknown>, string, string][] = [
        [{ mediaIds: [foreign] }, 'A media ID in trace does not belong to this chat.', 'trace.mediaIds'],
        [
          { mediaIds: ['nosuchmedia0000000000'] },
          'A media ID in trace does not belong to this chat.',
          'trace.mediaIds',
        ],
        [{ mediaIds: [audio, linked] }, 'A media ID in trace is already linked to another message.', 'trace.mediaIds'],
        [{ mediaId: audio, kind: 'image' }, 'trace.kind does not match linked media kind.', 'trace.kind'],
        // The legacy form still checks the kind (rule 9) before looking the medium up.
        [{ mediaId: audio, kind: 'note' }, 'trace.kind must be image, audio, or file when provided.', 'trace.kind'],
      ];
      for (const [trace, message, field] of cases) {
        const res = await api.post(`/api/v1/chats/${chat.id}/messages`, { role: 'user', content: 'x', trace });
        expect([res.status, res.body.error?.message, res.body.error?.details]).toEqual([400, message, { field }]);
      }
      expect((await mediaItem(audio))?.message_id).toBeNull();
      expect(await eventsSince(api.tableName, before)).toEqual([]);
      expect((await api.get(`/api/v1/chats/${chat.id}/messages`)).body.data).toEqual([]);
    },
  );

  it(
    'with trace.mediaIds, trace.kind is free-form: not checked against the media, stored and put in the dispatch ' +
      'input',
    async () => {
      const chat = await newChat();
      const img = await putMedia(chat.id, 'image');
      const trace = { mediaIds: [img], kind: 'note' };
      const res = await api.post(`/api/v1/chats/${chat.id}/messages`, { role: 'user', content: '  ', trace });
      expect([res.status, res.body.error]).toEqual([201, undefined]);
      expect(res.body).toMatchObject({ content_final: null, trace });
      expect((await mediaItem(img))?.message_id).toBe(res.body.id);
      const inputs = await dispatchInputs(api.tableName, chat.id);
      expect(inputs).toHaveLength(1);
      expect(inputs[0]).toMatchObject({
        source_id: res.body.id,
        content: '',
        trace_kind: 'note',
        media_ids: [img],
      });
    },
  );

  it('of two concurrent messages referencing one medium, exactly one links it', async () => {
    const chat = await newChat();
    const img = await putMedia(chat.id, 'image');
    const results = await Promise.all(
      [1, 2].map((i) =>
        api.post(`/api/v1/chats/${chat.id}/messages`, { role: 'user', content: `m${i}`, trace: { mediaIds: [img] } }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 400]);
    const winner = results.find((r) => r.status === 201)!;
    expect((await mediaItem(img))?.message_id).toBe(winner.body.id);
    expect((await api.get(`/api/v1/chats/${chat.id}/messages`)).body.data).toHaveLength(1);
  });

  it('a streaming message stores its trace but links no media', async () => {
    const chat = await newChat();
    const img = await putMedia(chat.id, 'image');
    const res = await api.post(`/api/v1/chats/${chat.id}/messages`, {
      role: 'agent',
      senderId: 'assistant',
      streaming: true,
      trace: { mediaIds: [img] },
    });
    expect(res.status).toBe(201);
    expect(res.body.trace).toEqual({ mediaIds: [img] });
    expect((await mediaItem(img))?.message_id).toBeNull();
  });

  it('writes a user message dispatch input with its content, trace kind and media ids (§4.4.1)', async () => {
    const chat = await newChat();
    const a = await putMedia(chat.id, 'file');
    const res = await api.post(`/api/v1/chats/${chat.id}/messages`, {
      role: 'user',
      content: ' see attached ',
      trace: { mediaIds: [a, ''], mediaId: 'legacy-id', kind: 'file' },
    });
    // '' is not a valid mediaIds entry (check 7).
    expect(res.status).toBe(400);
    const ok = await api.post(`/api/v1/chats/${chat.id}/messages`, {
      role: 'user',
      content: ' see attached ',
      trace: { mediaIds: [a], mediaId: 'legacy-id', kind: 'file' },
    });
    expect(ok.status).toBe(201);
    const agent = await api.post(`/api/v1/chats/${chat.id}/messages`, {
      role: 'agent',
      senderId: 'assistant',
      content: 'ok',
    });
    expect(agent.status).toBe(201);
    const inputs = await dispatchInputs(api.tableName, chat.id);
    expect(inputs).toHaveLength(1);
    expect(inputs[0]).toMatchObject({
      source_kind: 'user_message',
      source_id: ok.body.id,
      sender_id: 'user:primary',
      content: 'see attached',
      trace_kind: 'file',
      media_ids: [a, 'legacy-id'],
      state: 'pending',
    });
  });
});

describe('media linked after creation (an upload with messageId, §8.6)', () => {
  const upload = async (chatId: string, contentType: string, messageId?: string): Promise<string> => {
    const res = await api.post(`/api/v1/chats/${chatId}/media`, {
      fileName: 'f.bin',
      contentType,
      base64Data: Buffer.from('bytes').toString('base64'),
      ...(messageId ? { messageId } : {}),
    });
    expect(res.status).toBe(201);
    return res.body.id;
  };
  const listed = async (chatId: string) =>
    ((await api.get(`/api/v1/chats/${chatId}/messages`)).body.data as { id: string; stream_state: string }[]).map(
      (m) => [m.id, m.stream_state],
    );
  const chatFields = async (chatId: string) => {
    const chat = (await api.get(`/api/v1/chats/${chatId}`)).body;
    return [chat.last_message_preview, chat.last_message_role];
  };
  const startStream = async (chatId: string): Promise<string> =>
    (await api.post(`/api/v1/chats/${chatId}/messages`, { role: 'agent', senderId: 'assistant', streaming: true })).body
      .id;

  it('keeps a cancelled stream listed when a medium was linked to it while it streamed (§5.4.2)', async () => {
    const chat = await newChat();
    const older = (await api.post(`/api/v1/chats/${chat.id}/messages`, { role: 'user', content: 'older' })).body.id;
    const stream = await startStream(chat.id);
    await upload(chat.id, 'audio/ogg', stream);
    expect((await api.post(`/api/v1/messages/${stream}/cancel`, {})).status).toBe(200);
    expect(await listed(chat.id)).toEqual([
      [stream, 'cancelled'],
      [older, 'complete'],
    ]);
  });

  it('lists a hidden cancelled stream again once a medium is linked to it', async () => {
    const chat = await newChat();
    const stream = await startStream(chat.id);
    await api.post(`/api/v1/messages/${stream}/cancel`, {});
    expect(await listed(chat.id)).toEqual([]);
    await upload(chat.id, 'audio/ogg', stream);
    expect(await listed(chat.id)).toEqual([[stream, 'cancelled']]);
  });

  it('recomputes the preview from every linked medium: Voice note only when all are audio (§3.1, §3.3)', async () => {
    const chat = await newChat();
    const voice = await upload(chat.id, 'audio/ogg');
    const doc = await upload(chat.id, 'application/pdf');
    await api.post(`/api/v1/chats/${chat.id}/messages`, {
      role: 'agent',
      senderId: 'assistant',
      trace: { mediaIds: [voice, doc] },
    });
    // At creation the first medium decides; the recompute looks at all of them.
    expect(await chatFields(chat.id)).toEqual(['Voice note', 'agent']);
    await api.patch(`/api/v1/chats/${chat.id}`, { pinned: false });
    expect(await chatFields(chat.id)).toEqual(['Attachment', 'agent']);

    const other = await newChat();
    const alone = await upload(other.id, 'audio/ogg');
    const message = (
      await api.post(`/api/v1/chats/${other.id}/messages`, {
        role: 'agent',
        senderId: 'assistant',
        trace: { mediaIds: [alone] },
      })
    ).body.id;
    await api.post(`/api/v1/chats/${other.id}/mark-read`, {});
    expect(await chatFields(other.id)).toEqual(['Voice note', 'agent']);
    await upload(other.id, 'audio/mpeg', message);
    await api.post(`/api/v1/chats/${other.id}/mark-read`, {});
    expect(await chatFields(other.id)).toEqual(['Voice note', 'agent']);
    await upload(other.id, 'application/pdf', message);
    await api.post(`/api/v1/chats/${other.id}/mark-read`, {});
    expect(await chatFields(other.id)).toEqual(['Attachment', 'agent']);
  });

  it('gives an empty completed stream the label of media linked to it later, and its role', async () => {
    const chat = await newChat();
    await api.post(`/api/v1/chats/${chat.id}/messages`, { role: 'user', content: 'u' });
    const stream = await startStream(chat.id);
    await api.post(`/api/v1/messages/${stream}/complete`, {});
    await upload(chat.id, 'audio/ogg', stream);
    await api.post(`/api/v1/chats/${chat.id}/mark-unread`, {});
    expect(await chatFields(chat.id)).toEqual(['Voice note', 'agent']);
  });
});
