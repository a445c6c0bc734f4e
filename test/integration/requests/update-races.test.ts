/**
 * PATCH /api/v1/requests/{requestId} (contract §5.5.3) racing a resolve or a removal: one
 * conditional write, so a resolve that commits between the PATCH's read and its write is kept,
 * and a request gone meanwhile is not written back. Sources only (test/rehearsal/suite.js
 * SOURCE_ONLY): a middleware on the document client of the test's own process runs the other
 * operation right before the PATCH writes; a deployment's function cannot be held there.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { ddb } from '../../../functions/store/db.js';
import { Keys } from '../../../functions/store/keys.js';
import { eventsSince } from '../../support/events.js';
import { REQUEST_KEYS } from '../../support/shapes.js';
import { choiceBody, expectRequestNotFound, requestsApi, textBody } from './support.js';

const { api, h } = requestsApi();

const HOOK = 'between-patch-read-and-write';

/**
 * Runs `between` once, right before the PATCH that sets the title of `requestId` writes (so
 * after it has read the request): a deterministic interleaving with another operation. It
 * recognizes the write whatever its shape (UpdateItem, or an Update inside a transaction),
 * marshalled or not, so the test does not depend on how PATCH writes.
 */
function beforePatchWrite(requestId: string, between: () => Promise<void>): { fired: () => boolean } {
  let fired = false;
  const skOf = (key: any): unknown => (typeof key?.sk === 'string' ? key.sk : key?.sk?.S);
  const setsTitle = (update: any): boolean =>
    update !== undefined &&
    String(skOf(update.Key)).endsWith(`#${requestId}`) &&
    Object.values(update.ExpressionAttributeNames ?? {}).includes('title');
  ddb().middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as any;
      const updates =
        context.commandName === 'TransactWriteItemsCommand'
          ? (input.TransactItems ?? []).map((t: any) => t.Update)
          : [input];
      if (
        !fired &&
        ['UpdateItemCommand', 'TransactWriteItemsCommand'].includes(context.commandName ?? '') &&
        updates.some(setsTitle)
      ) {
        fired = true;
        await between();
      }
      return next(args);
    },
    { step: 'initialize', name: HOOK },
  );
  return { fired: () => fired };
}

/** PATCHes and expects 200 with a full Request. */
async function patched(requestId: string, body: unknown): Promise<any> {
  const res = await h.patch(requestId, body);
  expect([res.status, res.body?.error]).toEqual([200, undefined]);
  expect(Object.keys(res.body).sort()).toEqual(REQUEST_KEYS);
  return res.body;
}

describe('PATCH racing a resolve or a removal (one conditional write)', () => {
  afterEach(() => {
    ddb().middlewareStack.remove(HOOK);
  });

  it(
    "a resolve that commits between the PATCH's read and its write: both apply, and the PATCH answers the request " +
      'as stored (resolved)',
    async () => {
      const chat = await h.newChat();
      const request = await h.create(chat.id, choiceBody({ trace: { t: 1 } }));
      const events = await h.eventCount();
      let resolved: any;
      const hook = beforePatchWrite(request.id, async () => {
        resolved = await h.resolve(request.id, { selectedOptionIds: ['later'], resolvedBy: 'backend' });
      });
      const out = await patched(request.id, { title: ' Renamed ' });
      expect(hook.fired()).toBe(true);
      expect([resolved.status, resolved.body.error]).toEqual([200, undefined]);
      // The PATCH changed only its field, and did not undo or hide the resolution.
      expect(out).toEqual({
        ...request,
        title: 'Renamed',
        status: 'resolved',
        resolved_at: resolved.body.resolved_at,
        resolved_by: 'backend',
        resolution_payload: { selectedOptionIds: ['later'] },
      });
      expect(await h.find(chat.id, request.id)).toEqual(out);
      expect((await eventsSince(api.tableName, events)).map((e) => e.type)).toEqual(['request.resolved']);
      expect((await h.getChat(chat.id)).pending_requests_count).toBe(0);
      expect(await h.dispatchInputs(chat.id)).toHaveLength(1);
    },
  );

  it(
    'PATCHes and resolves sent together on 8 requests all succeed, and every request ends resolved with its new ' +
      'title',
    async () => {
      const chat = await h.newChat();
      const requests = await Promise.all([...Array(8).keys()].map(() => h.create(chat.id, textBody())));
      const events = await h.eventCount();
      const results = await Promise.all(
        requests.map(async (r, i) => {
          const [p, res] = await Promise.all([h.patch(r.id, { title: `T${i}` }), h.resolve(r.id, { text: 'Ann' })]);
          return { p, res };
        }),
      );
      for (const [i, { p, res }] of results.entries()) {
        expect([p.status, p.body?.error, res.status, res.body?.error]).toEqual([200, undefined, 200, undefined]);
        // Whichever landed first, the PATCH's answer is a state the request really had.
        if (p.body.status === 'resolved') expect(p.body).toEqual({ ...res.body, title: `T${i}` });
        else expect(p.body).toEqual({ ...requests[i], title: `T${i}` });
      }
      const stored = new Map((await h.list(chat.id)).map((r) => [r.id, r]));
      expect(requests.map((r) => stored.get(r.id)).map((r) => [r?.title, r?.status, r?.resolution_payload])).toEqual(
        requests.map((_, i) => [`T${i}`, 'resolved', { text: 'Ann' }]),
      );
      expect((await eventsSince(api.tableName, events)).map((e) => e.type)).toEqual(Array(8).fill('request.resolved'));
      expect((await h.getChat(chat.id)).pending_requests_count).toBe(0);
    },
  );

  it(
    "a request that disappears between the PATCH's read and its write answers 404 and is not written " + 'back',
    async () => {
      const chat = await h.newChat();
      const request = await h.create(chat.id, choiceBody());
      const key = Keys.request(chat.id, request.created_at, request.id);
      const hook = beforePatchWrite(request.id, async () => {
        await ddb().send(new DeleteCommand({ TableName: api.tableName, Key: key }));
      });
      const res = await h.patch(request.id, { title: 'Ghost' });
      expect(hook.fired()).toBe(true);
      expectRequestNotFound(res, request.id);
      // Without its condition the update would have created a fragment of a request from the key.
      expect(
        (await ddb().send(new GetCommand({ TableName: api.tableName, Key: key, ConsistentRead: true }))).Item,
      ).toBeUndefined();
      expect(await h.list(chat.id)).toEqual([]);
    },
  );
});
