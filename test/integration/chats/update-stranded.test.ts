/**
 * PATCH /chats/{chatId} with many tags (contract §5.3.3): when the catalog parts of a committed
 * change cannot be applied (as after a crash), the change is still answered, and the sweeper
 * applies each stranded part exactly once. Sources only (test/rehearsal/suite.js SOURCE_ONLY): a
 * middleware on the document client of the test's own process makes the parts' transactions fail
 * and the test runs the sweeper itself; a deployment's function cannot be made to fail from
 * outside. update.test.ts covers the catalog when nothing fails.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { sweepCatalogParts } from '../../../functions/core/tags.js';
import { ddb } from '../../../functions/store/db.js';
import { pendingParts, readPart } from '../../../functions/store/tags-repo.js';
import { twoAgentConfig, useApi } from '../../support/api.js';
import { catalogOf, farFuture, mismatches, recountOf } from './tag-catalog.js';

const body = (o: Record<string, unknown> = {}) => ({ agentIds: ['assistant'], modelId: 'model-a', ...o });
const api = useApi({ config: { titleMaxChars: 10, ...twoAgentConfig } });
const catalog = () => catalogOf();
const recount = () => recountOf(api);
const named = (prefix: string, count: number, from = 0) =>
  Array.from({ length: count }, (_, i) => `${prefix}${String(from + i).padStart(4, '0')}`);

describe('when the catalog parts cannot be applied after the commit (as after a crash)', () => {
  const name = 'fail-catalog-parts';
  afterEach(() => {
    ddb().middlewareStack.remove(name);
  });

  it('still answers the committed change, and the sweeper applies each stranded part exactly once', async () => {
    const chat = (await api.post('/api/v1/chats', body({ tags: named('crash-a-', 100) }))).body;
    let refused = 0;
    ddb().middlewareStack.add(
      (next, context) => async (args) => {
        const items = (args.input as { TransactItems?: { Delete?: unknown }[] }).TransactItems;
        if (context.commandName === 'TransactWriteItemsCommand' && items?.[0]?.Delete) {
          refused++;
          throw new Error('simulated crash before applying a catalog part');
        }
        return next(args);
      },
      { step: 'initialize', name },
    );
    const tags = named('crash-b-', 300);
    const res = await api.patch(`/api/v1/chats/${chat.id}`, { tags });
    expect(res.status).toBe(200);
    expect(res.body.tags).toEqual(tags);
    expect(refused).toBeGreaterThan(0);
    ddb().middlewareStack.remove(name);

    // The catalog is off by exactly the stranded parts' adjustments, and by nothing else.
    const stranded = await pendingParts(farFuture, 100);
    expect(stranded.length).toBeGreaterThan(0);
    const waiting = (await Promise.all(stranded.map(async (key) => (await readPart(key))!.adjustments))).flat();
    const off = mismatches(await catalog(), await recount());
    expect(off.map(([t, stored, truth]) => [t, truth - stored]).sort()).toEqual(
      waiting.map((a) => [a.name, a.delta]).sort(),
    );
    // Too young for the sweeper's schedule; then due.
    expect(await sweepCatalogParts()).toBe(0);
    expect(await sweepCatalogParts(0, Date.now() + 1000)).toBe(stranded.length);
    expect(mismatches(await catalog(), await recount())).toEqual([]);
    // A second run (or a late original apply) changes nothing.
    expect(await sweepCatalogParts(0, Date.now() + 1000)).toBe(0);
    expect(await Promise.all(stranded.map(async (key) => readPart(key)))).toEqual(stranded.map(() => undefined));
    expect(mismatches(await catalog(), await recount())).toEqual([]);
  });
});
