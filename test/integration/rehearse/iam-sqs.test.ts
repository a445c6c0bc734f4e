/**
 * The rehearsal's IAM gateway in front of the SQS emulator (fauxqs): the synthesized dispatch
 * claim role may receive from the batches queue (a long poll, piped whole) and send to the flush
 * queue only; a send it is not granted fails with SQS's AccessDenied and leaves the queue as it
 * was; a queue policy's explicit Deny wins; a client that gives up its long poll ends it upstream.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startFauxqsOnLoopback } from '../../../local/fauxqs.js';
import { startIamGateway } from '../../../local/rehearse/iam/gateway.js';
import type { IamGateway } from '../../../local/rehearse/iam/gateway.js';
import type { RehearsalPrincipal } from '../../../local/rehearse/iam/types.js';
import {
  ACCOUNT,
  REGION,
  allow,
  policy,
  principal,
  queueArnOf,
  synthesizedPolicy,
} from '../../support/rehearse-iam.js';

const claim = principal(
  'DispatchClaim',
  synthesizedPolicy('dispatchClaim', {
    table: 't',
    queues: { DispatchBatches0ABE82F6: 'batches', DispatchFlushSignalsB6B2388B: 'flush' },
  }),
);
const fenced = principal(
  'Fenced',
  policy(allow(['sqs:SendMessage', 'sqs:GetQueueAttributes'], [queueArnOf('fenced')])),
);
const fencedPolicy = policy({
  Effect: 'Deny',
  Principal: { AWS: '*' },
  Action: 'sqs:SendMessage',
  Resource: queueArnOf('fenced'),
  Condition: { StringEquals: { 'aws:PrincipalAccount': ACCOUNT } },
});

let fauxqs: Awaited<ReturnType<typeof startFauxqsOnLoopback>>;
let gateway: IamGateway;
let direct: SQSClient;
const urls: Record<string, string> = {};
const clients: SQSClient[] = [];

function clientOf(p: RehearsalPrincipal): SQSClient {
  const client = new SQSClient({
    endpoint: gateway.endpoints.sqs,
    region: REGION,
    credentials: { accessKeyId: p.accessKeyId, secretAccessKey: p.secretAccessKey },
    maxAttempts: 1,
  });
  clients.push(client);
  return client;
}

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !condition(); i++) await new Promise((ok) => setTimeout(ok, 20));
  if (!condition()) throw new Error('the gateway did not forward the poll');
}

const depth = async (name: string) =>
  Number(
    (
      await direct.send(
        new GetQueueAttributesCommand({ QueueUrl: urls[name], AttributeNames: ['ApproximateNumberOfMessages'] }),
      )
    ).Attributes?.ApproximateNumberOfMessages,
  );

beforeAll(async () => {
  fauxqs = await startFauxqsOnLoopback({ port: 0, logger: false });
  const upstream = `http://127.0.0.1:${fauxqs.port}`;
  direct = new SQSClient({
    endpoint: upstream,
    region: REGION,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  for (const name of ['batches', 'flush', 'fenced'])
    urls[name] = (await direct.send(new CreateQueueCommand({ QueueName: name }))).QueueUrl!;
  gateway = await startIamGateway({
    account: ACCOUNT,
    region: REGION,
    principals: [claim, fenced],
    upstream: { dynamodb: 'http://127.0.0.1:9', sqs: upstream },
    resourcePolicies: { [queueArnOf('fenced')]: fencedPolicy },
  });
});

afterAll(async () => {
  for (const client of clients) client.destroy();
  direct?.destroy();
  await gateway?.stop();
  await fauxqs?.stop();
});

describe('SQS through the IAM gateway', () => {
  it('denies a send to a queue the role may not write, with SQS’s AccessDenied, and nothing is sent', async () => {
    const error = await clientOf(claim)
      .send(new SendMessageCommand({ QueueUrl: urls.batches, MessageBody: 'x' }))
      .then(
        () => undefined,
        (e: unknown) => e as Error & { $metadata?: { httpStatusCode?: number } },
      );
    expect(error?.name).toBe('AccessDenied');
    expect(error?.message).toBe(
      `User: arn:aws:sts::${ACCOUNT}:assumed-role/DispatchClaimRole/DispatchClaim is not authorized to perform: ` +
        `sqs:sendmessage on resource: ${queueArnOf('batches')} because no identity-based policy allows the sqs:sendmessage action`,
    );
    expect(error?.$metadata?.httpStatusCode).toBe(403);
    expect(await depth('batches')).toBe(0);
  });

  it('pipes an allowed long poll whole, and the message sent meanwhile arrives through it', async () => {
    const client = clientOf(claim);
    const started = Date.now();
    const poll = client.send(
      new ReceiveMessageCommand({ QueueUrl: urls.batches, WaitTimeSeconds: 3, MaxNumberOfMessages: 1 }),
    );
    const empty = await poll;
    expect(empty.Messages ?? []).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_500);
    const waiting = client.send(new ReceiveMessageCommand({ QueueUrl: urls.batches, WaitTimeSeconds: 10 }));
    await new Promise((ok) => setTimeout(ok, 300));
    await direct.send(new SendMessageCommand({ QueueUrl: urls.batches, MessageBody: 'batch-1' }));
    expect((await waiting).Messages?.map((m) => m.Body)).toEqual(['batch-1']);
    // Its allowed send goes to the flush queue.
    await client.send(new SendMessageCommand({ QueueUrl: urls.flush, MessageBody: 'signal' }));
    expect(await depth('flush')).toBe(1);
  });

  it('ends the upstream long poll when the client gives up', async () => {
    // fauxqs keeps a long poll whose client left (it would hand it the next message), so the
    // upstream here is a server that holds every request and notes when its connection closes.
    let closed!: () => void;
    const upstreamClosed = new Promise<void>((ok) => (closed = ok));
    let received = false;
    const holder = createServer((req) => {
      received = true;
      req.socket.once('close', () => closed());
    });
    await new Promise<void>((ok) => holder.listen(0, '127.0.0.1', ok));
    const held = await startIamGateway({
      account: ACCOUNT,
      region: REGION,
      principals: [claim],
      upstream: { dynamodb: 'http://127.0.0.1:9', sqs: `http://127.0.0.1:${(holder.address() as AddressInfo).port}` },
    });
    try {
      const client = new SQSClient({
        endpoint: held.endpoints.sqs,
        region: REGION,
        credentials: { accessKeyId: claim.accessKeyId, secretAccessKey: claim.secretAccessKey },
        maxAttempts: 1,
      });
      clients.push(client);
      const controller = new AbortController();
      const poll = client.send(new ReceiveMessageCommand({ QueueUrl: urls.batches, WaitTimeSeconds: 20 }), {
        abortSignal: controller.signal,
      });
      await waitFor(() => received);
      controller.abort();
      await expect(poll).rejects.toThrow();
      await Promise.race([
        upstreamClosed,
        new Promise((_, fail) => setTimeout(() => fail(new Error('the upstream poll stayed open')), 3_000)),
      ]);
    } finally {
      holder.closeAllConnections();
      holder.close();
      await held.stop();
    }
  });

  it('applies the queue policy: its explicit Deny wins over the role’s Allow', async () => {
    const error = await clientOf(fenced)
      .send(new SendMessageCommand({ QueueUrl: urls.fenced, MessageBody: 'x' }))
      .then(
        () => undefined,
        (e: unknown) => e as Error,
      );
    expect(error?.name).toBe('AccessDenied');
    expect(error?.message).toMatch(/with an explicit deny in a resource-based policy$/);
    expect(await depth('fenced')).toBe(0);
  });
});
