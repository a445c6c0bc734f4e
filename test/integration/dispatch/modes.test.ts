/**
 * Dispatch in `immediate` mode (contract §4.4.2, §4.4.8, §2.5): every input is a batch of its
 * own at once, and batches of one chat may be leased concurrently; item fields for traces and
 * media-only messages.
 */
import { describe, expect, it } from '@jest/globals';
import { LONG_BATCHING, QUICK_RETRIES, configWith, dispatchApi, userBatch, userItem } from './support.js';

const config = configWith({ mode: 'immediate', ...LONG_BATCHING, ...QUICK_RETRIES, maxAttempts: 3 });

const { api, d } = dispatchApi(config);

describe('immediate mode', () => {
  it("makes the chat's first message a batch of its own, claimable at once", async () => {
    // Warm the claim handler so "at once" measures the mode, not module loading.
    await d.claimNone({ workerId: 'w1', waitMs: 0 });
    const chat = await d.newChat({ firstMessage: '  hello there  ' });
    const messages = (await api.get(`/api/v1/chats/${chat.id}/messages`)).body.data as any[];
    const batch = await d.claimOne({ workerId: 'w1', waitMs: 0 });
    expect(batch).toEqual(userBatch(chat.id, 'hello there', [userItem(messages[0].id, 'hello there')]));
    await d.completeOk(batch.batchId, 'w1');
  });

  it('makes each message its own batch at once, despite typing and the batching settings', async () => {
    const chat = await d.newChat();
    await d.typing(chat.id);
    const ids = [await d.say(chat.id, 'one'), await d.say(chat.id, 'two'), await d.say(chat.id, 'three')];
    await d.typing(chat.id);
    const got: string[] = [];
    for (let i = 0; i < 3; i++) {
      const batch = await d.claimOne({ workerId: `w${i}`, waitMs: 0 });
      expect(batch.items).toHaveLength(1);
      expect(batch.compiledContent).toBe(batch.items[0]!.content);
      got.push(batch.items[0]!.sourceId);
      await d.completeOk(batch.batchId, `w${i}`);
    }
    expect(got.sort()).toEqual([...ids].sort());
  });

  it('leases several batches of one chat concurrently', async () => {
    const chat = await d.newChat();
    const ids = [await d.say(chat.id, 'a'), await d.say(chat.id, 'b'), await d.say(chat.id, 'c')];
    const first = await d.claimOne({ workerId: 'w1', waitMs: 2000, leaseMs: 20_000 });
    const second = await d.claimOne({ workerId: 'w2', waitMs: 2000, leaseMs: 20_000 });
    const third = await d.claimOne({ workerId: 'w3', waitMs: 2000, leaseMs: 20_000 });
    const batches = [first, second, third];
    expect(batches.map((b) => b.chatId)).toEqual([chat.id, chat.id, chat.id]);
    expect(new Set(batches.map((b) => b.batchId)).size).toBe(3);
    expect(batches.flatMap((b) => b.items.map((i) => i.sourceId)).sort()).toEqual([...ids].sort());
    // All three held at once: each heartbeat succeeds.
    for (const [i, b] of batches.entries())
      expect((await d.heartbeat(b.batchId, { workerId: `w${i + 1}` })).status).toBe(204);
    for (const [i, b] of batches.entries()) await d.completeOk(b.batchId, `w${i + 1}`);
  });

  it("a batch waiting out a retry delay does not hold back the chat's other batches", async () => {
    const { chat, id: m1 } = await d.chatWithMessage('first');
    const first = await d.claimOne({ workerId: 'w1', waitMs: 2000 });
    expect(first.items[0]!.sourceId).toBe(m1);
    await d.failOk(first.batchId, { workerId: 'w1', reason: 'later', retryable: true, retryDelayMs: 3000 });
    const m2 = await d.say(chat.id, 'second');
    const second = await d.claimOne({ workerId: 'w2', waitMs: 2000 });
    expect(second.items[0]!.sourceId).toBe(m2);
    await d.completeOk(second.batchId, 'w2');
    const retried = await d.claimOne({ workerId: 'w3', waitMs: 6000 });
    expect(retried.batchId).toBe(first.batchId);
    await d.completeOk(retried.batchId, 'w3');
  });

  it('a media-only message is "(no text)" with its attachment; traceKind only when the trace has a kind', async () => {
    const chat = await d.newChat();
    const photo = await d.putMedia(chat.id, 'photo.jpg', 'image');
    const mediaOnly = await d.say(chat.id, '   ', { trace: { mediaIds: [photo] } });
    const batch = await d.claimOne({ workerId: 'w1', waitMs: 2000 });
    expect(batch).toMatchObject({
      compiledContent: '(no text)',
      items: [userItem(mediaOnly, '', { mediaIds: [photo], attachmentNames: ['photo.jpg'] })],
      attachments: [
        {
          mediaId: photo,
          fileName: 'photo.jpg',
          kind: 'image',
          sourceInputId: batch.items[0]!.inputId,
          sourceIndex: 0,
        },
      ],
    });
    expect('traceKind' in batch.items[0]!).toBe(false);
    await d.completeOk(batch.batchId, 'w1');

    const withKind = await d.say(chat.id, 'a file note', { trace: { kind: 'file' } });
    const kinded = await d.claimOne({ workerId: 'w1', waitMs: 2000 });
    expect(kinded.items).toEqual([userItem(withKind, 'a file note', { traceKind: 'file' })]);
    await d.completeOk(kinded.batchId, 'w1');

    const plain = await d.say(chat.id, 'no trace');
    const plainBatch = await d.claimOne({ workerId: 'w1', waitMs: 2000 });
    expect(plainBatch.items[0]!.sourceId).toBe(plain);
    expect(Object.keys(plainBatch.items[0]!).sort()).toEqual([
      'attachmentNames',
      'content',
      'inputId',
      'mediaIds',
      'senderId',
      'sourceId',
      'sourceKind',
    ]);
    await d.completeOk(plainBatch.batchId, 'w1');

    // mediaIds first, then the legacy mediaId; an id that is no medium of the chat stays in
    // mediaIds but gets no name and no attachment.
    const doc = await d.putMedia(chat.id, 'doc.pdf');
    const both = await d.say(chat.id, 'see doc', { trace: { mediaIds: [doc], mediaId: 'legacy-id', kind: 'file' } });
    const bothBatch = await d.claimOne({ workerId: 'w1', waitMs: 2000 });
    expect(bothBatch).toMatchObject({
      compiledContent: 'see doc',
      items: [
        userItem(both, 'see doc', { traceKind: 'file', mediaIds: [doc, 'legacy-id'], attachmentNames: ['doc.pdf'] }),
      ],
      attachments: [
        { mediaId: doc, fileName: 'doc.pdf', kind: 'file', sourceInputId: bothBatch.items[0]!.inputId, sourceIndex: 0 },
      ],
    });
    await d.completeOk(bothBatch.batchId, 'w1');

    // The legacy form alone: a voice note.
    const voice = await d.putMedia(chat.id, 'voice.webm', 'audio');
    const note = await d.say(chat.id, '', { trace: { mediaId: voice, kind: 'audio' } });
    const noteBatch = await d.claimOne({ workerId: 'w1', waitMs: 2000 });
    expect(noteBatch).toMatchObject({
      compiledContent: '(no text)',
      items: [userItem(note, '', { traceKind: 'audio', mediaIds: [voice], attachmentNames: ['voice.webm'] })],
      attachments: [
        {
          mediaId: voice,
          fileName: 'voice.webm',
          kind: 'audio',
          sourceInputId: noteBatch.items[0]!.inputId,
          sourceIndex: 0,
        },
      ],
    });
    await d.completeOk(noteBatch.batchId, 'w1');
  });

  it('creates no input for agent or system messages', async () => {
    const chat = await d.newChat();
    expect(
      (await api.post(`/api/v1/chats/${chat.id}/messages`, { role: 'agent', senderId: 'assistant', content: 'hi' }))
        .status,
    ).toBe(201);
    expect(
      (await api.post(`/api/v1/chats/${chat.id}/messages`, { role: 'system', senderId: 'system', content: 'note' }))
        .status,
    ).toBe(201);
    await d.claimNone({ workerId: 'w1', waitMs: 1000 });
  });
});
