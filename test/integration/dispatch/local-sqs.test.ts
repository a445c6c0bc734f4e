/**
 * The local SQS emulator (fauxqs, started by local/sqs.ts exactly as `npm start` does) keeps
 * the queue semantics dispatch relies on (docs/dispatch-plan.md), for every call the code
 * makes, both in memory and with a data folder (npm start keeps one under DATA_DIR/sqs): FIFO
 * groups deliver one message at a time while other groups flow, ChangeMessageVisibility
 * extends a lease and ends it with 0 (upstream 2.4.1 lost the message here with a data folder;
 * local/sqs.ts repairs that), a stale receipt handle is refused as AWS refuses it, an expired
 * visibility redelivers with a higher receive count, FIFO deduplicates by id and rejects
 * per-message delays, the flush queue honours DelaySeconds, and a restart keeps what was
 * queued and what was in flight. If an emulator upgrade changes any of this, these tests say
 * so before the dispatch tests get confusing.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { Message } from '@aws-sdk/client-sqs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QUEUE_RETENTION_SECONDS, isStaleReceipt } from '../../../functions/platform/queues.js';
import { startLocalSqs } from '../../../local/sqs.js';
import type { LocalSqs } from '../../../local/sqs.js';
import { sleep } from '../../../functions/platform/retry.js';

const bodies = (ms: Message[]) => ms.map((m) => m.Body).sort();
const folders: string[] = [];
afterAll(() => folders.forEach((f) => rmSync(f, { recursive: true, force: true })));
const newFolder = () => {
  const f = mkdtempSync(join(tmpdir(), 'local-sqs-test-'));
  folders.push(f);
  return f;
};

/** A client on one running emulator, with the calls dispatch makes. */
function clientOf(local: LocalSqs) {
  // One attempt: a failing call must show here, not be retried away.
  const sqs = new SQSClient({
    endpoint: local.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
  let counter = 0;
  const self = {
    sqs,
    send: (body: string, group: string, dedup = `d-${counter++}-${Date.now()}`) =>
      sqs.send(
        new SendMessageCommand({
          QueueUrl: local.dispatchQueueUrl,
          MessageBody: body,
          MessageGroupId: group,
          MessageDeduplicationId: dedup,
        }),
      ),
    receive: async (visibility: number, max = 10, wait = 0): Promise<Message[]> =>
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
      ).Messages ?? [],
    remove: (m: Message) =>
      sqs.send(new DeleteMessageCommand({ QueueUrl: local.dispatchQueueUrl, ReceiptHandle: m.ReceiptHandle! })),
    hide: (m: Message, seconds: number) =>
      sqs.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: local.dispatchQueueUrl,
          ReceiptHandle: m.ReceiptHandle!,
          VisibilityTimeout: seconds,
        }),
      ),
    /** Receives until nothing comes, deleting everything (a clean queue between tests). */
    async purge(): Promise<void> {
      for (;;) {
        const got = await self.receive(30);
        if (got.length === 0) return;
        await Promise.all(got.map(self.remove));
      }
    },
  };
  return self;
}

const modes: [string, () => string | undefined][] = [
  ['in memory', () => undefined],
  ['with a data folder (as npm start runs it)', newFolder],
];

describe.each(modes)('local SQS (fauxqs) %s', (_label, folder) => {
  let local: LocalSqs;
  let q: ReturnType<typeof clientOf>;
  beforeAll(async () => {
    // Its flush poller consumes the flush queue; these tests use the FIFO batch queue only.
    local = await startLocalSqs(folder());
    q = clientOf(local);
  });
  afterAll(async () => {
    q?.sqs.destroy();
    await local?.stop();
  });

  it("creates both queues with the stack's retention, SQS's longest (14 days)", async () => {
    for (const QueueUrl of [local.dispatchQueueUrl, local.flushQueueUrl]) {
      const out = await q.sqs.send(
        new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['MessageRetentionPeriod'] }),
      );
      expect([QueueUrl, out.Attributes?.MessageRetentionPeriod]).toEqual([QueueUrl, String(QUEUE_RETENTION_SECONDS)]);
    }
    expect(QUEUE_RETENTION_SECONDS).toBe(14 * 86_400);
  });

  it('delivers one message of a group at a time, in order, while other groups flow', async () => {
    await q.purge();
    await q.send('a1', 'chat-a');
    await q.send('a2', 'chat-a');
    await q.send('b1', 'chat-b');
    const first = await q.receive(30);
    expect(bodies(first)).toEqual(['a1', 'b1']);
    // a2 waits behind a1, in flight.
    expect(await q.receive(30)).toEqual([]);
    await q.remove(first.find((m) => m.Body === 'a1')!);
    const next = await q.receive(30);
    expect(bodies(next)).toEqual(['a2']);
    await Promise.all([...first.filter((m) => m.Body === 'b1'), ...next].map(q.remove));
  });

  it(
    'extends a lease with ChangeMessageVisibility and ends it with 0: the message returns with its receive count ' +
      'raised',
    async () => {
      await q.purge();
      await q.send('lease', 'chat-c');
      const [m] = await q.receive(1);
      await q.hide(m!, 3);
      // Kept (time is the behavior): the visibility timeout outlives 1 s.
      await sleep(1500);
      expect(await q.receive(30)).toEqual([]); // past the first 1 s, still hidden
      await q.hide(m!, 0);
      const again = await q.receive(30);
      expect(bodies(again)).toEqual(['lease']);
      expect(again[0]!.Attributes?.ApproximateReceiveCount).toBe('2');
      // And again (the retry path ends a lease with 0 once per attempt).
      await q.hide(again[0]!, 0);
      const third = await q.receive(30);
      expect(third.map((x) => [x.Body, x.Attributes?.ApproximateReceiveCount])).toEqual([['lease', '3']]);
      await q.remove(third[0]!);
      expect(await q.receive(30)).toEqual([]);
    },
  );

  it(
    'ending a visibility with 0 unblocks the group: the next message of the chat flows after the first is ' + 'deleted',
    async () => {
      await q.purge();
      await q.send('first', 'chat-g');
      await q.send('second', 'chat-g');
      const [m] = await q.receive(30);
      await q.hide(m!, 0);
      const [again] = await q.receive(30);
      expect(again!.Body).toBe('first');
      await q.remove(again!);
      expect(bodies(await q.receive(30, 10, 1))).toEqual(['second']);
      await q.purge();
    },
  );

  it(
    'refuses a stale receipt handle (the message was received again since) as AWS does, and a stale delete deletes ' +
      'nothing',
    async () => {
      await q.purge();
      await q.send('stale', 'chat-s');
      const [old] = await q.receive(1);
      // Kept (time is the behavior): the first receive's 1 s visibility runs out.
      await sleep(1100);
      const [fresh] = await q.receive(30);
      expect(fresh!.Body).toBe('stale');
      const refused = await q.hide(old!, 0).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(isStaleReceipt(refused)).toBe(true);
      // Deleting with the old handle answers OK (as AWS may) but leaves the message in flight.
      await q.remove(old!);
      await q.hide(fresh!, 0);
      const back = await q.receive(30);
      expect(bodies(back)).toEqual(['stale']);
      await q.remove(back[0]!);
    },
  );

  it(
    'redelivers when the visibility runs out, with the receive count raised, and blocks the group until ' + 'then',
    async () => {
      await q.purge();
      await q.send('expiring', 'chat-d');
      await q.send('behind', 'chat-d');
      // Taken before the receive: its 1 s visibility runs from the queue's clock reading, after this.
      const started = Date.now();
      const [m] = await q.receive(1);
      expect(m!.Body).toBe('expiring');
      const again = await q.receive(30, 10, 3);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
      expect(again.map((x) => [x.Body, x.Attributes?.ApproximateReceiveCount])).toEqual([['expiring', '2']]);
      await q.remove(again[0]!);
      const last = await q.receive(30);
      expect(bodies(last)).toEqual(['behind']);
      await q.remove(last[0]!);
    },
  );

  it(
    'drops a duplicate by MessageDeduplicationId, accepts a copy under another id, and rejects a per-message ' +
      'delay',
    async () => {
      await q.purge();
      await q.send('once', 'chat-e', 'same-id');
      await q.send('once again', 'chat-e', 'same-id');
      await q.send('copy', 'chat-e', 'same-id.r1');
      const got = await q.receive(30);
      expect(bodies(got)).toEqual(['once']);
      await q.remove(got[0]!);
      const copy = await q.receive(30);
      expect(bodies(copy)).toEqual(['copy']);
      await q.remove(copy[0]!);
      await expect(
        q.sqs.send(
          new SendMessageCommand({
            QueueUrl: local.dispatchQueueUrl,
            MessageBody: 'late',
            MessageGroupId: 'chat-e',
            MessageDeduplicationId: 'delayed',
            DelaySeconds: 1,
          }),
        ),
      ).rejects.toThrow();
    },
  );
});

describe('local SQS (fauxqs) with a data folder, across a restart', () => {
  it(
    'keeps queued messages, keeps an in-flight message hidden until its visibility ends, and keeps a message ' +
      'returned with 0',
    async () => {
      const dir = newFolder();
      let local = await startLocalSqs(dir);
      let q = clientOf(local);
      await q.send('waiting', 'chat-w');
      await q.send('held', 'chat-h');
      await q.send('returned', 'chat-r');
      const got = await q.receive(30);
      expect(bodies(got)).toEqual(['held', 'returned', 'waiting']);
      await q.hide(
        got.find((m) => m.Body === 'waiting')!,
        0,
      );
      await q.hide(
        got.find((m) => m.Body === 'held')!,
        2,
      );
      await q.hide(
        got.find((m) => m.Body === 'returned')!,
        0,
      );
      q.sqs.destroy();
      await local.stop();

      local = await startLocalSqs(dir);
      q = clientOf(local);
      try {
        const after = await q.receive(30);
        expect(after.map((m) => [m.Body, m.Attributes?.ApproximateReceiveCount]).sort()).toEqual([
          ['returned', '2'],
          ['waiting', '2'],
        ]);
        const held = await q.receive(30, 10, 3);
        expect(held.map((m) => [m.Body, m.Attributes?.ApproximateReceiveCount])).toEqual([['held', '2']]);
        await Promise.all([...after, ...held].map(q.remove));
      } finally {
        q.sqs.destroy();
        await local.stop();
      }
    },
  );
});
