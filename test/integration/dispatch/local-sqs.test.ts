/**
 * The local SQS emulator (fauxqs, started by local/sqs.ts exactly as `npm start` does) keeps
 * the queue semantics dispatch relies on (docs/dispatch-plan.md): FIFO groups deliver one
 * message at a time while other groups flow, ChangeMessageVisibility extends and ends a lease,
 * an expired visibility redelivers with a higher receive count, and FIFO deduplicates by id and
 * rejects per-message delays (the flush queue's DelaySeconds is exercised by every
 * batched_sequential test through its consumer). If an emulator
 * upgrade changes any of this, these tests say so before the dispatch tests get confusing.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { Message } from '@aws-sdk/client-sqs';
import { startLocalSqs } from '../../../local/sqs.js';
import type { LocalSqs } from '../../../local/sqs.js';

let local: LocalSqs;
let sqs: SQSClient;
beforeAll(async () => {
  // Its flush poller consumes the flush queue; these tests use the FIFO batch queue only.
  local = await startLocalSqs();
  sqs = new SQSClient({ endpoint: local.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
});
afterAll(async () => {
  sqs?.destroy();
  await local?.stop();
});

let counter = 0;
const send = (body: string, group: string, dedup = `d-${counter++}-${Date.now()}`) =>
  sqs.send(new SendMessageCommand({ QueueUrl: local.dispatchQueueUrl, MessageBody: body, MessageGroupId: group, MessageDeduplicationId: dedup }));
const receive = async (visibility: number, max = 10, wait = 0): Promise<Message[]> =>
  (
    await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: local.dispatchQueueUrl,
        MaxNumberOfMessages: max,
        WaitTimeSeconds: wait,
        VisibilityTimeout: visibility,
        MessageSystemAttributeNames: ['ApproximateReceiveCount'],
      }),
    )
  ).Messages ?? [];
const remove = (m: Message) => sqs.send(new DeleteMessageCommand({ QueueUrl: local.dispatchQueueUrl, ReceiptHandle: m.ReceiptHandle! }));
const hide = (m: Message, seconds: number) =>
  sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: local.dispatchQueueUrl, ReceiptHandle: m.ReceiptHandle!, VisibilityTimeout: seconds }));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const bodies = (ms: Message[]) => ms.map((m) => m.Body).sort();

/** Receives until nothing comes, deleting everything (a clean queue between tests). */
async function purge(): Promise<void> {
  for (;;) {
    const got = await receive(30);
    if (got.length === 0) return;
    await Promise.all(got.map(remove));
  }
}

describe('local SQS (fauxqs) FIFO semantics', () => {
  it('delivers one message of a group at a time, in order, while other groups flow', async () => {
    await purge();
    await send('a1', 'chat-a');
    await send('a2', 'chat-a');
    await send('b1', 'chat-b');
    const first = await receive(30);
    expect(bodies(first)).toEqual(['a1', 'b1']);
    // a2 waits behind a1, in flight.
    expect(await receive(30)).toEqual([]);
    await remove(first.find((m) => m.Body === 'a1')!);
    const next = await receive(30);
    expect(bodies(next)).toEqual(['a2']);
    await Promise.all([...first.filter((m) => m.Body === 'b1'), ...next].map(remove));
  });

  it('extends a lease with ChangeMessageVisibility and ends it with 0', async () => {
    await purge();
    await send('lease', 'chat-c');
    const [m] = await receive(1);
    await hide(m!, 3);
    await sleep(1500);
    expect(await receive(30)).toEqual([]); // past the first 1 s, still hidden
    await hide(m!, 0);
    const again = await receive(30);
    expect(bodies(again)).toEqual(['lease']);
    expect(again[0]!.Attributes?.ApproximateReceiveCount).toBe('2');
    await remove(again[0]!);
  });

  it('redelivers when the visibility runs out, with the receive count raised, and blocks the group until then', async () => {
    await purge();
    await send('expiring', 'chat-d');
    await send('behind', 'chat-d');
    const [m] = await receive(1);
    expect(m!.Body).toBe('expiring');
    const started = Date.now();
    const again = await receive(30, 10, 3);
    expect(Date.now() - started).toBeGreaterThanOrEqual(800);
    expect(again.map((x) => [x.Body, x.Attributes?.ApproximateReceiveCount])).toEqual([['expiring', '2']]);
    await remove(again[0]!);
    const last = await receive(30);
    expect(bodies(last)).toEqual(['behind']);
    await remove(last[0]!);
  });

  it('drops a duplicate by MessageDeduplicationId and rejects a per-message delay', async () => {
    await purge();
    await send('once', 'chat-e', 'same-id');
    await send('once again', 'chat-e', 'same-id');
    const got = await receive(30);
    expect(bodies(got)).toEqual(['once']);
    await remove(got[0]!);
    await expect(
      sqs.send(new SendMessageCommand({ QueueUrl: local.dispatchQueueUrl, MessageBody: 'late', MessageGroupId: 'chat-e', MessageDeduplicationId: 'delayed', DelaySeconds: 1 })),
    ).rejects.toThrow();
  });
});
