/**
 * Requests with deadlines and the approvals list (contract §5.5.6), seeded and read through the
 * API as an agent would (bearer secret), for approvals.test.ts, decisions.test.ts and
 * reminder-actions.test.ts.
 */
import type { Page } from 'playwright-core';
import { apiOk, createRequest } from './app.js';
import type { Relay } from './relay.js';

/** A choice of two, Ship or Hold, with a deadline when given (the body's `deadline` field). */
export const shipOrHold = (title: string, deadline?: Record<string, unknown>) => ({
  type: 'choice',
  title,
  config: {
    options: [
      { id: 'ship', label: 'Ship', variant: 'primary' },
      { id: 'hold', label: 'Hold' },
    ],
  },
  ...(deadline ? { deadline } : {}),
});

/** Every pending request of the instance (GET /requests, all pages), in the service's order. */
export async function pendingRequests(relay: Relay): Promise<any[]> {
  const all: any[] = [];
  let cursor: string | null = null;
  do {
    const page: any = await apiOk(
      relay,
      'GET',
      `/api/v1/requests?status=pending&limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    all.push(...page.data);
    cursor = page.cursor.hasMore ? page.cursor.next : null;
  } while (cursor);
  return all;
}

/** Cancels every pending request (a test starts from an empty approvals list). */
export async function cancelAllPending(relay: Relay): Promise<void> {
  for (const request of await pendingRequests(relay)) {
    await apiOk(relay, 'POST', `/api/v1/requests/${request.id}/cancel`);
  }
}

export async function createWith(relay: Relay, chatId: string, request: Record<string, unknown>): Promise<string> {
  return ((await createRequest(relay, chatId, request)) as { id: string }).id;
}

/** The whole decision log, ascending seq, as the API serves it. */
export async function decisionLog(relay: Relay): Promise<any[]> {
  const all: any[] = [];
  let after = 0;
  for (;;) {
    const page: any = await apiOk(relay, 'GET', `/api/v1/decisions?after=${after}&limit=500`);
    all.push(...page.data);
    if (page.next === null || page.data.length === 0) return all;
    after = page.next;
  }
}

/** The request ids the Approvals view lists, in order. */
export const approvalIds = (page: Page): Promise<string[]> =>
  page
    .locator('[data-testid="approval"]')
    .evaluateAll((items) => items.map((item) => item.getAttribute('data-request-id')!));
