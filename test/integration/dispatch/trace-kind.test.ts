/**
 * A free-form `trace.kind` reaches the worker (contract §5.4.1, §4.4.1, §2.5): without a media
 * reference any kind is accepted, and a claimed batch's item carries it as `traceKind` when it
 * is a string (omitted otherwise). `immediate` mode, so each message is claimable at once.
 */
import { describe, expect, it } from '@jest/globals';
import { QUICK_RETRIES, configWith, dispatchApi, userBatch, userItem } from './support.js';

const config = configWith({ mode: 'immediate', ...QUICK_RETRIES, maxAttempts: 3 });

const { d } = dispatchApi(config);

describe('trace.kind in dispatch items', () => {
  it('a message whose trace is {"kind":"note"} is claimed with traceKind "note"', async () => {
    const { chat, id: note } = await d.chatWithMessage('remember this', { trace: { kind: 'note' } });
    const batch = await d.claimOne({ workerId: 'w1', waitMs: 2000 });
    expect(batch).toEqual(
      userBatch(chat.id, 'remember this', [userItem(note, 'remember this', { traceKind: 'note' })]),
    );
    await d.completeOk(batch.batchId, 'w1');
  });

  it('a free-form kind beside trace.mediaIds is passed on too, with the attachment', async () => {
    const chat = await d.newChat();
    const photo = await d.putMedia(chat.id, 'photo.jpg', 'image');
    const id = await d.say(chat.id, '', { trace: { mediaIds: [photo], kind: 'screenshot' } });
    const batch = await d.claimOne({ workerId: 'w1', waitMs: 2000 });
    expect(batch.items).toEqual([
      userItem(id, '', { traceKind: 'screenshot', mediaIds: [photo], attachmentNames: ['photo.jpg'] }),
    ]);
    expect(batch.attachments).toEqual([
      { mediaId: photo, fileName: 'photo.jpg', kind: 'image', sourceInputId: batch.items[0]!.inputId, sourceIndex: 0 },
    ]);
    await d.completeOk(batch.batchId, 'w1');
  });

  it('a kind that is not a string is accepted and stored, but the item has no traceKind', async () => {
    const { id } = await d.chatWithMessage('numbered', { trace: { kind: 7 } });
    const batch = await d.claimOne({ workerId: 'w1', waitMs: 2000 });
    expect(batch.items.map((i) => i.sourceId)).toEqual([id]);
    expect('traceKind' in batch.items[0]!).toBe(false);
    await d.completeOk(batch.batchId, 'w1');
  });
});
