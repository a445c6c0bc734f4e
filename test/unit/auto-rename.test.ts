/** The pure rules of auto-rename (contract §10.1, §10.4): trigger, context text, title from a reply. */
import { describe, expect, it } from '@jest/globals';
import { contextText, finalizedAgentMessageChat, titleFromReply } from '../../functions/core/auto-rename.js';
import type { ContextMessage } from '../../functions/core/auto-rename.js';

const user = (text: string | null): ContextMessage => ({ role: 'user', content_final: text });
const agent = (text: string | null): ContextMessage => ({ role: 'agent', content_final: text });
const event = (type: string, payload: Record<string, unknown>) => ({ seq: 1, id: 'e', type, timestamp: '', payload });

describe('finalizedAgentMessageChat (§10.1)', () => {
  it('is the chat of an agent message created complete or an agent stream completed, and nothing else', () => {
    const created = {
      chatId: 'c',
      messageId: 'm',
      role: 'agent',
      senderId: 'assistant',
      streamState: 'complete',
      contentFinal: 'done',
      createdAt: '2025-05-02T09:20:11.456Z',
      trace: null,
    };
    const completed = { chatId: 'c', messageId: 'm', role: 'agent', streamState: 'complete', finalText: 'done' };
    expect(finalizedAgentMessageChat(event('message.created', created))).toBe('c');
    expect(finalizedAgentMessageChat(event('message.streaming.complete', completed))).toBe('c');
    for (const [type, payload] of [
      ['message.created', { ...created, role: 'user' }],
      ['message.created', { ...created, role: 'system' }],
      ['message.created', { ...created, streamState: 'streaming', contentFinal: null }],
      ['message.streaming.complete', { ...completed, streamState: 'cancelled', finalText: null }],
      ['chat.updated', created],
      // A payload its type's schema does not accept (model/events.ts) is no trigger.
      ['message.created', { role: 'agent', streamState: 'complete' }],
      ['message.streaming.complete', { chatId: 'c', role: 'agent', streamState: 'complete' }],
    ] as const) {
      expect([type, payload, finalizedAgentMessageChat(event(type, payload))]).toEqual([type, payload, undefined]);
    }
  });
});

describe('contextText (§10.2, §10.4)', () => {
  it('writes one User:/Assistant: line per message, trimmed, joined by newlines', () => {
    expect(contextText([user('  hello there, this is thirty chars  '), agent(' hi '), agent(null)])).toBe(
      'User: hello there, this is thirty chars\nAssistant: hi\nAssistant: ',
    );
  });

  it('cuts a text over 300 characters to 300 and appends …; exactly 300 stays whole', () => {
    const exactly = 'e'.repeat(300);
    const over = `${'o'.repeat(300)}x`;
    expect(contextText([user(exactly), agent(over)])).toBe(`User: ${exactly}\nAssistant: ${'o'.repeat(300)}…`);
  });

  it('cuts by characters, never splitting an astral one', () => {
    expect(contextText([user('😀'.repeat(301))])).toBe(`User: ${'😀'.repeat(300)}…`);
    // 200 emoji are 400 UTF-16 units but 200 characters: nothing is cut.
    expect(contextText([user('😀'.repeat(200))])).toBe(`User: ${'😀'.repeat(200)}`);
    // And 15 emoji count 15 toward the 30 characters of user text, not 30.
    expect(contextText([user('😀'.repeat(15))])).toBeUndefined();
  });

  it('needs a message and at least 30 characters of trimmed user text (agent text does not count)', () => {
    expect(contextText([])).toBeUndefined();
    expect(contextText([user(` ${'x'.repeat(29)} `), agent('y'.repeat(500))])).toBeUndefined();
    expect(contextText([user('x'.repeat(10)), user('y'.repeat(20))])).toBe(
      `User: ${'x'.repeat(10)}\nUser: ${'y'.repeat(20)}`,
    );
    expect(contextText([agent('a'.repeat(100))])).toBeUndefined();
  });
});

describe('titleFromReply (§10.4)', () => {
  it('trims and cuts to 48 characters; an empty reply gives none', () => {
    expect(titleFromReply('  Lisbon trip  \n')).toBe('Lisbon trip');
    expect(titleFromReply('x'.repeat(60))).toBe('x'.repeat(48));
    expect(titleFromReply(`${'x'.repeat(47)} tail`)).toBe('x'.repeat(47));
    expect(titleFromReply(' \n\t ')).toBeUndefined();
    expect(titleFromReply('')).toBeUndefined();
  });
});
