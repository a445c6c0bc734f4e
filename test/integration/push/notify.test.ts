/**
 * The push notifier (contract §7.3–§7.6) as `npm start` runs it: the local tail of the event
 * log hands new events to core/push.ts, which sends to every subscribed device through the
 * recording transport. Triggers (agent message, completed stream, new request), non-triggers
 * (user message, stream start and cancel, muted chat, push off), payload content and both
 * shortening limits, and the AWS stream consumer's at-most-once sending for a redelivered record.
 */
import { beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { useApi } from '../../support/api.js';
import { decrypt, newDevice, recordPushes, sleep } from './support.js';
import type { Device, Recorder } from './support.js';

const LONG_NAME = 'N'.repeat(3_600);
const config = {
  appName: 'Relay',
  push: { enabled: true, subject: 'mailto:ops@example.com' },
  agents: [
    { id: 'ada', name: 'Ada', description: '' },
    { id: 'bob', name: 'Bob', description: '' },
    { id: 'long', name: LONG_NAME, description: '' },
    { id: 'huge', name: 'H'.repeat(4_100), description: '' },
  ],
  models: [{ id: 'm', name: 'Model', description: '' }],
};
let pushes: Recorder;
const devices: Device[] = [newDevice(), newDevice('web.push.apple.com')];
const api = useApi(() => {
  pushes = recordPushes();
  return { config };
});
beforeAll(async () => {
  for (const d of devices) {
    expect((await api.post('/api/v1/push/subscribe', { endpoint: d.endpoint, keys: d.keys })).status).toBe(201);
  }
});
beforeEach(() => pushes.reset());

const newChat = async (agentIds = ['ada']) =>
  (await api.post('/api/v1/chats', { agentIds, modelId: 'm' })).body as { id: string };
const post = async (chatId: string, body: Record<string, unknown>) => {
  const res = await api.post(`/api/v1/chats/${chatId}/messages`, body);
  expect(res.status).toBe(201);
  return res.body as { id: string };
};
const agentSays = (chatId: string, content: string, senderId = 'ada') =>
  post(chatId, { role: 'agent', senderId, content });

/** Every device got exactly one push, all with the same content: that content. */
async function theNotification() {
  await pushes.waitFor(devices.length);
  // Kept: an absence (no second push to any device), observable only by waiting.
  await sleep(300);
  expect(pushes.requests).toHaveLength(devices.length);
  const payloads = devices.map((d) => {
    expect(pushes.to(d)).toHaveLength(1);
    return decrypt(d, pushes.to(d)[0]!);
  });
  expect(payloads[1]).toEqual(payloads[0]);
  return payloads[0]!;
}

/** Nothing was sent for what happened before a sentinel push (the tail handles events in order). */
async function nothingBefore(sentinelChat: string) {
  await agentSays(sentinelChat, 'sentinel');
  const payload = await theNotification();
  expect(payload.body).toBe('sentinel');
}

describe('triggers (§7.3)', () => {
  it('an agent message: titled with the agent name, its text, message data', async () => {
    const chat = await newChat();
    const message = await agentSays(chat.id, '  Here is the outline you asked for.  ');
    expect(await theNotification()).toEqual({
      title: 'Ada',
      body: 'Here is the outline you asked for.',
      data: { chatId: chat.id, messageId: message.id, type: 'message', url: `/chats/${chat.id}` },
    });
  });

  it('a completed stream: the final text, trimmed and cut to 180 characters', async () => {
    const chat = await newChat();
    const message = await post(chat.id, { role: 'agent', senderId: 'bob', streaming: true });
    await api.post(`/api/v1/messages/${message.id}/chunks`, { deltaText: ` ${'x'.repeat(250)} ` });
    // Kept: an absence (no push for an unfinished stream), observable only by waiting.
    await sleep(500);
    expect(pushes.requests).toHaveLength(0);
    expect((await api.post(`/api/v1/messages/${message.id}/complete`, {})).status).toBe(200);
    expect(await theNotification()).toEqual({
      title: 'Bob',
      body: 'x'.repeat(180),
      data: { chatId: chat.id, messageId: message.id, type: 'message', url: `/chats/${chat.id}` },
    });
  });

  it("a new request: titled with the chat's first agent, the request title, no messageId", async () => {
    const chat = await newChat(['bob', 'ada']);
    const res = await api.post(`/api/v1/chats/${chat.id}/requests`, {
      type: 'choice',
      title: 'Approve deploy?',
      config: { options: [{ id: 'yes', label: 'Yes' }] },
    });
    expect(res.status).toBe(201);
    expect(await theNotification()).toEqual({
      title: 'Bob',
      body: 'Approve deploy?',
      data: { chatId: chat.id, type: 'request', url: `/chats/${chat.id}` },
    });
  });
});

describe('non-triggers (§7.3, §7.6)', () => {
  it('user messages, stream starts and cancels, and typing send nothing', async () => {
    const chat = await newChat();
    await post(chat.id, { role: 'user', senderId: 'user:primary', content: 'hello' });
    const stream = await post(chat.id, { role: 'agent', senderId: 'ada', streaming: true });
    await api.post(`/api/v1/messages/${stream.id}/chunks`, { deltaText: 'partial' });
    await api.post(`/api/v1/chats/${chat.id}/typing`, { agentId: 'ada' });
    expect((await api.post(`/api/v1/messages/${stream.id}/cancel`, {})).status).toBe(200);
    await nothingBefore((await newChat()).id);
  });

  it('a muted chat sends nothing, for messages and requests; unmuting sends the next one', async () => {
    const chat = await newChat();
    expect((await api.patch(`/api/v1/chats/${chat.id}`, { notificationsMuted: true })).status).toBe(200);
    await agentSays(chat.id, 'muted');
    await api.post(`/api/v1/chats/${chat.id}/requests`, {
      type: 'choice',
      title: 'muted?',
      config: { options: [{ id: 'a', label: 'A' }] },
    });
    await nothingBefore((await newChat()).id);
    pushes.reset();
    await api.patch(`/api/v1/chats/${chat.id}`, { notificationsMuted: false });
    await agentSays(chat.id, 'audible');
    expect((await theNotification()).body).toBe('audible');
  });

  it('push turned off sends nothing', async () => {
    api.setConfig({ ...config, push: { enabled: false } });
    try {
      const chat = await newChat();
      await agentSays(chat.id, 'while off');
      // Longer than the local tail's look at the log's head while push is off (within a second of
      // a write, local/event-tail.ts): with less, a fast run turned push back on before the tail
      // had looked past this event, and the tail then sent it during the next test.
      // Kept (time is the behavior).
      await sleep(1_500);
      expect(pushes.requests).toHaveLength(0);
    } finally {
      api.setConfig(config);
    }
  });
});

describe('payload limits (§7.4)', () => {
  it('cuts a long body to 239 characters and an ellipsis', async () => {
    const chat = await newChat();
    await agentSays(chat.id, `${'word '.repeat(100)}`);
    const { body } = await theNotification();
    expect(body).toHaveLength(240);
    expect(body).toBe(`${'word '.repeat(48).slice(0, 239).trimEnd()}…`);
  });

  it('shortens the body 16 characters at a time until the payload fits in 4000 bytes', async () => {
    const chat = await newChat(['long']);
    await agentSays(chat.id, 'é'.repeat(300), 'long');
    const payload = await theNotification();
    expect(payload.title).toBe(LONG_NAME);
    const size = Buffer.byteLength(JSON.stringify(payload));
    expect(size).toBeLessThanOrEqual(4000);
    // Each step drops 16 characters (the ellipsis among them) and puts the ellipsis back: the
    // body is the longest of 239, 224, 209… characters plus '…' that fits; one step longer does not.
    const kept = payload.body.length - 1;
    expect(payload.body).toBe(`${'é'.repeat(kept)}…`);
    expect((239 - kept) % 15).toBe(0);
    const longer = { ...payload, body: `${'é'.repeat(kept + 15)}…` };
    expect(Buffer.byteLength(JSON.stringify(longer))).toBeGreaterThan(4000);
  });

  it('sends nothing when even an empty body cannot fit (a huge title), and the request still succeeds', async () => {
    const chat = await newChat(['huge']);
    await agentSays(chat.id, 'too big to send', 'huge');
    await nothingBefore((await newChat()).id);
  });
});

describe('at most once per event', () => {
  it('the stream consumer sends once when the same record arrives twice', async () => {
    const chat = await newChat();
    await agentSays(chat.id, 'once');
    await theNotification();
    pushes.reset();
    // The event item exactly as the table's stream would carry it, delivered twice.
    const { currentSequence } = await import('../../../functions/store/events-repo.js');
    const { Keys } = await import('../../../functions/store/keys.js');
    const seq = await currentSequence();
    const doc = DynamoDBDocumentClient.from(
      new DynamoDBClient({ endpoint: process.env.DYNAMODB_ENDPOINT, region: 'us-east-1' }),
    );
    const item = (await doc.send(new GetCommand({ TableName: api.tableName, Key: Keys.event(seq) }))).Item!;
    expect(item.eventType).toBe('message.created');
    // A fresh event id, so the live tail's own sending of it does not count here.
    const copy = { ...item, id: `${String(item.id).slice(0, 9)}${'z'.repeat(12)}` };
    const record = (n: number) => ({
      eventID: String(n),
      eventName: 'INSERT' as const,
      dynamodb: { NewImage: marshall(copy, { removeUndefinedValues: true }) as never, SequenceNumber: String(n) },
    });
    const { handler } = await import('../../../functions/jobs/event-effects.js');
    const { asInvocation } = await import('../../../local/invocations.js');
    const context = { awsRequestId: 'r', functionName: 'event-effects' } as never;
    const consume = (records: ReturnType<typeof record>[]) =>
      asInvocation(() => handler({ Records: records } as DynamoDBStreamEvent, context));
    expect(await consume([record(1), record(2)])).toEqual({ batchItemFailures: [] });
    expect(await consume([record(3)])).toEqual({ batchItemFailures: [] });
    expect(pushes.requests).toHaveLength(devices.length);
    expect(decrypt(devices[0]!, pushes.to(devices[0]!)[0]!).title).toBe('Ada');
    // An event whose agent is not (or no longer) configured: the title falls back to appName.
    pushes.reset();
    const stranger = {
      ...copy,
      id: `${String(item.id).slice(0, 9)}${'y'.repeat(12)}`,
      payload: { ...(item.payload as Record<string, unknown>), senderId: 'gone' },
    };
    const strangerRecord = { ...record(4), dynamodb: { NewImage: marshall(stranger) as never, SequenceNumber: '4' } };
    expect(await consume([strangerRecord])).toEqual({ batchItemFailures: [] });
    expect(devices.map((d) => decrypt(d, pushes.to(d)[0]!).title)).toEqual(['Relay', 'Relay']);
  });
});
