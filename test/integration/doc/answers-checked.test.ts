/**
 * The suite's check of every answer against the published document (test/support/openapi-check.ts,
 * issue 35 item 2) catches what it exists to catch: each case takes a real answer of the API and
 * changes one thing a handler could get wrong.
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { newChat, useApi } from '../../support/api.js';
import { answerProblem, publishedDocumentFile } from '../../support/openapi-check.js';
import type { Answer } from '../../support/openapi-check.js';

const api = useApi({ config: { agents: [{ id: 'agent-default', name: 'A', description: '' }] } });

const json = (status: number, body: unknown): Answer => ({
  status,
  headers: new Headers({ 'content-type': 'application/json; charset=utf-8' }),
  body,
  text: JSON.stringify(body),
});
const problem = async (method: string, path: string, answer: Answer) => answerProblem(method, path, answer);

describe('every answer is checked against the OpenAPI document', () => {
  it('checks against the very document GET /api/v1/doc serves (its version aside)', async () => {
    const served = await api.get('/api/v1/doc');
    expect(served.status).toBe(200);
    const checked = JSON.parse(readFileSync(publishedDocumentFile(), 'utf8')) as { info: object };
    const { info: servedInfo, ...servedRest } = served.body as { info: object };
    const { info: checkedInfo, ...checkedRest } = checked;
    expect(servedRest).toEqual(checkedRest);
    expect({ ...servedInfo, version: '' }).toEqual({ ...checkedInfo, version: '' });
  });

  it('passes the real answers, and names a field a handler added, dropped or mistyped', async () => {
    const created = await api.post('/api/v1/chats', newChat({ title: 'checked' }));
    expect(created.status).toBe(201);
    const chat = created.body as Record<string, unknown>;
    const path = `/api/v1/chats/${String(chat.id)}`;
    const read = await api.get(path);
    expect(await problem('GET', path, read)).toBeUndefined();

    expect(await problem('GET', path, json(200, { ...chat, surprise: 1 }))).toMatch(
      /^GET \/api\/v1\/chats\/\S+ answered 200 \(\/api\/v1\/chats\/\{chatId\}\): the body does not match the document: .*surprise/,
    );
    const { title: _dropped, ...withoutTitle } = chat;
    expect(await problem('GET', path, json(200, withoutTitle))).toMatch(/must have required property 'title'/);
    expect(await problem('GET', path, json(200, { ...chat, unread_count: '1' }))).toMatch(/\/unread_count must be/);
  });

  it('names a status the operation does not list, and a body where it gives none', async () => {
    expect(await problem('GET', '/api/v1/health', json(418, { error: 'teapot' }))).toMatch(
      /^GET \/api\/v1\/health answered 418, which the document does not list for GET \/api\/v1\/health \(it lists 200/,
    );
    const chat = (await api.post('/api/v1/chats', newChat())).body as { id: string };
    const typing = `/api/v1/chats/${chat.id}/typing`;
    const noContent = await api.post(typing, { agentId: 'agent-default' });
    expect(noContent.status).toBe(204);
    expect(await problem('POST', typing, noContent)).toBeUndefined();
    expect(await problem('POST', typing, { ...noContent, text: '{}' })).toMatch(/gives this answer no content/);
  });

  it('names a media type the document does not give, and checks errors of undocumented paths as the envelope', async () => {
    const health = await api.get('/api/v1/health');
    const asText = { ...health, headers: new Headers({ 'content-type': 'text/plain' }) };
    expect(await problem('GET', '/api/v1/health', asText)).toMatch(
      /as text\/plain, where the document gives application\/json/,
    );
    const unknown = await api.get('/api/v1/nothing-here');
    expect(unknown.status).toBe(404);
    expect(await problem('GET', '/api/v1/nothing-here', unknown)).toBeUndefined();
    expect(await problem('GET', '/api/v1/nothing-here', json(404, { message: 'not the envelope' }))).toMatch(
      /must have required property 'error'/,
    );
  });
});
