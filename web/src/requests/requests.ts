/**
 * A chat's interactive requests in the query cache: every one, pending and closed (§5.5.2,
 * `status=all`, oldest first), shown pending above the composer and closed in the history where
 * they were asked. Live events close a known one in place, and re-read the list for one this page
 * never saw (asked and answered between reads) or a new one.
 */
import { useQuery } from '@tanstack/react-query';
import { api } from '../api/client';
import { keys, queryClient, reread } from '../api/query-client';
import type { ChatRequest, EventEnvelope, Resolution } from '../api/types';
import { live } from '../live/events';
import { dropApproval } from '../approvals/approvals';

interface Split {
  pending: ChatRequest[];
  /** Answered or cancelled, oldest first. */
  closed: ChatRequest[];
}

/** Oldest first, as the service lists them (§5.5.2: `created_at`, then `id`). */
function compareRequests(a: ChatRequest, b: ChatRequest): number {
  return a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

const split = (all: { data: ChatRequest[] }): Split => ({
  pending: all.data.filter((r) => r.status === 'pending'),
  closed: all.data.filter((r) => r.status !== 'pending').sort(compareRequests),
});

const empty: Split = { pending: [], closed: [] };

export function useRequests(chatId: string): Split {
  const query = useQuery({
    queryKey: keys.requests(chatId),
    queryFn: async () => {
      await live.ready();
      return api.allRequests(chatId);
    },
    select: split,
  });
  return query.data ?? empty;
}

/** Puts a closed request in place of the pending one; false when the cache does not hold it. */
function replace(chatId: string, id: string, close: (request: ChatRequest) => ChatRequest): boolean {
  const held = queryClient.getQueryData<{ data: ChatRequest[] }>(keys.requests(chatId));
  const request = held?.data.find((r) => r.id === id);
  if (!held || !request) return false;
  if (request.status === 'pending') {
    queryClient.setQueryData(keys.requests(chatId), { data: held.data.map((r) => (r.id === id ? close(r) : r)) });
  }
  return true;
}

export const rereadRequests = (chatId: string) => void reread(keys.requests(chatId));

/** A request's live events (§6.2). */
export function applyRequestEvent(event: EventEnvelope): void {
  switch (event.type) {
    case 'request.created':
      rereadRequests(event.payload.chatId);
      break;
    case 'request.reminder':
      // A reminder may follow a deadline changed by a PATCH (which sends no event): read it again.
      rereadRequests(event.payload.chatId);
      break;
    case 'request.resolved':
    case 'request.cancelled': {
      const p = event.payload;
      const known = replace(p.chatId, p.requestId, (r) => ({
        ...r,
        status: p.status,
        resolved_at: event.timestamp,
        resolved_by: 'senderId' in p ? (p.senderId as ChatRequest['resolved_by']) : r.resolved_by,
        resolution_payload: p.resolution_payload,
        expired_at: p.reason === 'deadline' ? event.timestamp : r.expired_at,
      }));
      if (!known) rereadRequests(p.chatId);
      break;
    }
  }
}

/** Answers a request (the key is reused by a retry of the same answer); the answer closes it here. */
export async function resolveRequest(request: ChatRequest, resolution: Resolution, idempotencyKey: string) {
  const resolved = await api.resolveRequest(request.id, resolution, idempotencyKey);
  replace(request.chat_id, request.id, () => resolved);
  dropApproval(request.id);
}
