/**
 * Reminder pushes (contract §5.5.6, §7.3 rules): a deadline's reminder is a push titled with the
 * request's title, its body saying how long is left, its data naming the request and, for a choice
 * request with at most two options and one selection, those options as the notification's answer
 * actions; none for a muted chat. The reminder's timer record is handed to its handler directly.
 */
import { beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { getConfig } from '../../../functions/core/instance-config.js';
import { fireRequestTimer } from '../../../functions/core/request-expiry.js';
import { useApi } from '../../support/api.js';
import { decrypt, newDevice, recordPushes } from './support.js';
import type { Recorder } from './support.js';

const config = {
  appName: 'Relay',
  push: { enabled: true, subject: 'mailto:ops@example.com' },
  agents: [{ id: 'ada', name: 'Ada', description: '' }],
  models: [{ id: 'm', name: 'Model', description: '' }],
};
let pushes: Recorder;
const device = newDevice();
const api = useApi(() => {
  pushes = recordPushes();
  return { config };
});
beforeAll(async () => {
  expect((await api.post('/api/v1/push/subscribe', { endpoint: device.endpoint, keys: device.keys })).status).toBe(201);
});
beforeEach(() => pushes.reset());

const YES_NO = {
  options: [
    { id: 'yes', label: 'Ship it' },
    { id: 'hold', label: 'Hold' },
  ],
};

/** A chat and a request with a 10-minute deadline and a 5-minute reminder; its creation push taken. */
async function requestWith(body: Record<string, unknown>, muted = false) {
  const chat = (await api.post('/api/v1/chats', { agentIds: ['ada'], modelId: 'm' })).body;
  if (muted) expect((await api.patch(`/api/v1/chats/${chat.id}`, { notificationsMuted: true })).status).toBe(200);
  const res = await api.post(`/api/v1/chats/${chat.id}/requests`, {
    title: 'Deploy to production?',
    ...body,
    deadline: { inSeconds: 600, remindBeforeSeconds: [300] },
  });
  expect(res.status).toBe(201);
  if (!muted) {
    await pushes.waitFor(1);
    pushes.reset();
  }
  return { chat, request: res.body };
}

async function remind(request: any) {
  const fireAtMs = Date.parse(request.deadline.at) - 300_000;
  const timer = { requestId: request.id, kind: 'remind' as const, at: request.deadline.at, before: 300, fireAtMs };
  expect(await fireRequestTimer(await getConfig(), timer, fireAtMs)).toBe('reminded');
}

describe('reminder pushes (§5.5.6)', () => {
  it('titled with the request, the time left, and the two options as answer actions', async () => {
    const { chat, request } = await requestWith({ type: 'choice', config: YES_NO });
    await remind(request);
    await pushes.waitFor(1);
    expect(decrypt(device, pushes.to(device)[0]!)).toEqual({
      title: 'Deploy to production?',
      body: '5 minutes left to answer.',
      data: {
        chatId: chat.id,
        type: 'request',
        url: `/chats/${chat.id}`,
        requestId: request.id,
        actions: [
          { id: 'yes', label: 'Ship it' },
          { id: 'hold', label: 'Hold' },
        ],
      },
    });
  });

  it('no actions for more than two options, several selections, or another type', async () => {
    const three = { options: [...YES_NO.options, { id: 'later', label: 'Later' }] };
    for (const body of [
      { type: 'choice', config: three },
      { type: 'choice', config: { ...YES_NO, maxSelections: 2 } },
      { type: 'text_input', config: {} },
    ]) {
      const { chat, request } = await requestWith(body);
      await remind(request);
      await pushes.waitFor(1);
      expect(decrypt(device, pushes.to(device)[0]!).data).toEqual({
        chatId: chat.id,
        type: 'request',
        url: `/chats/${chat.id}`,
        requestId: request.id,
      });
      pushes.reset();
    }
  });

  it('a muted chat gets no reminder push (the event is still written)', async () => {
    const { request } = await requestWith({ type: 'choice', config: YES_NO }, true);
    await remind(request);
    // A sentinel after it: the tail hands events over in order, so the next push is the sentinel's.
    const sentinel = (await api.post('/api/v1/chats', { agentIds: ['ada'], modelId: 'm' })).body;
    await api.post(`/api/v1/chats/${sentinel.id}/requests`, { type: 'text_input', title: 'sentinel', config: {} });
    await pushes.waitFor(1);
    expect(pushes.requests).toHaveLength(1);
    expect(decrypt(device, pushes.to(device)[0]!).body).toBe('sentinel');
  });
});
