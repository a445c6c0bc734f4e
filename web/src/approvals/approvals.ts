/**
 * Every chat's pending requests in one query (GET /requests?status=pending, §5.5.6), for the
 * Approvals view and the navigation's badge: all pages read by cursor, in the service's order
 * (those with a deadline first, soonest first; then the rest, oldest first). Live events keep it
 * current: a request closed anywhere leaves it at once; a new one, or a reminder (a deadline may
 * have been changed by a PATCH, which sends no event), reads it again.
 */
import { useQuery } from '@tanstack/react-query';
import { api } from '../api/client';
import { keys, queryClient, reread } from '../api/query-client';
import type { ChatRequest, EventEnvelope } from '../api/types';
import { live } from '../live/events';

/** Pages of 200 (the service's most); past 2,000 pending requests the list stops and says so. */
const PAGE = 200;
export const MOST = 2000;

async function readAll(): Promise<ChatRequest[]> {
  const all: ChatRequest[] = [];
  const seen = new Set<string>();
  let cursor: string | null = null;
  do {
    const page = await api.listRequests({ status: 'pending', limit: PAGE, cursor });
    for (const request of page.data) {
      if (seen.has(request.id)) continue;
      seen.add(request.id);
      all.push(request);
    }
    cursor = page.cursor.hasMore ? page.cursor.next : null;
  } while (cursor && all.length < MOST);
  return all;
}

export function useApprovals() {
  return useQuery({
    queryKey: keys.approvals(),
    queryFn: async () => {
      await live.ready();
      return readAll();
    },
  });
}

/** A request closed (answered here, elsewhere, or by its deadline) leaves the list. */
export function dropApproval(requestId: string): void {
  const held = queryClient.getQueryData<ChatRequest[]>(keys.approvals());
  if (held?.some((r) => r.id === requestId)) {
    queryClient.setQueryData(
      keys.approvals(),
      held.filter((r) => r.id !== requestId),
    );
  }
}

const rereadApprovals = () => void reread(keys.approvals());

/** A request's live events (§6.2) applied to the approvals. */
export function applyApprovalEvent(event: EventEnvelope): void {
  switch (event.type) {
    case 'request.created':
    case 'request.reminder':
      rereadApprovals();
      break;
    case 'request.resolved':
    case 'request.cancelled':
      dropApproval(event.payload.requestId);
      break;
  }
}
