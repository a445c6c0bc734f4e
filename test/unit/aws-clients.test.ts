/**
 * Every AWS call gives up inside the function timeout of every route (issue 17 finding 7): a
 * dependency that hangs answers the contract's 500 envelope from our handler, not the platform's
 * timeout. The budgets are also far above a slow call, so a loaded table is not mistaken for a dead one.
 */
import { describe, expect, it } from '@jest/globals';
import {
  CONTROL_PLANE_BUDGET,
  DYNAMODB_BUDGET,
  S3_BUDGET,
  SQS_BUDGET,
  clientBudget,
  longPollTimeoutMs,
  worstCaseMs,
} from '../../functions/platform/aws-clients.js';
import { functionTimeoutSeconds, routes } from '../../lib/routes.js';
import type { RouteSpec } from '../../lib/routes.js';

const all = routes as readonly RouteSpec[];
const shortest = Math.min(...all.map((r) => functionTimeoutSeconds(r))) * 1000;

describe('AWS client budgets', () => {
  it.each([
    ['DynamoDB', DYNAMODB_BUDGET],
    ['S3', S3_BUDGET],
    ['SQS', SQS_BUDGET],
    ['Step Functions', CONTROL_PLANE_BUDGET],
  ])('%s: every attempt timing out still ends 2 s before the shortest route timeout', (_, budget) => {
    expect(shortest).toBe(15_000);
    expect(worstCaseMs(budget)).toBeLessThanOrEqual(shortest - 2000);
    expect(budget.requestTimeoutMs).toBeGreaterThanOrEqual(4000);
    // Throttling gets retried (the SDK's attempts are shared by every kind of error).
    expect(budget.maxAttempts).toBeGreaterThanOrEqual(2);
    expect(budget.connectionTimeoutMs).toBeLessThan(budget.requestTimeoutMs);
    // One dropped SYN (resent after Linux's initial 1 s retransmission timeout) still connects.
    expect(budget.connectionTimeoutMs).toBeGreaterThan(1000);
  });

  it('counts the back-offs between attempts', () => {
    expect(worstCaseMs({ connectionTimeoutMs: 1, requestTimeoutMs: 1000, maxAttempts: 3 })).toBe(3000 + 100 + 200);
  });

  it('a claim long poll (at most 20 s) ends inside the claim routes timeout', () => {
    const claims = all.filter((r) => r.dispatch && /claim/.test(r.path));
    expect(claims.length).toBeGreaterThan(0);
    for (const route of claims) expect(longPollTimeoutMs(20)).toBeLessThan(functionTimeoutSeconds(route) * 1000);
  });

  it('hands the SDK timeouts that throw (a breach only warns otherwise)', () => {
    expect(clientBudget(DYNAMODB_BUDGET, { keepAlive: true })).toEqual({
      maxAttempts: DYNAMODB_BUDGET.maxAttempts,
      requestHandler: {
        connectionTimeout: DYNAMODB_BUDGET.connectionTimeoutMs,
        requestTimeout: DYNAMODB_BUDGET.requestTimeoutMs,
        throwOnRequestTimeout: true,
        httpAgent: { keepAlive: true },
      },
    });
  });
});
