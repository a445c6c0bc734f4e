/**
 * The Approvals view (/approvals): every chat's pending requests in one list, soonest deadline
 * first (the service's order, §5.5.6), each under its chat's title (a link to the chat) and answered
 * in place with the chat's own request card (its countdown and default included). Kept live by the
 * approvals query (approvals.ts): answered here or anywhere, a request leaves the list.
 */
import { messageOf } from '../api/client';
import type { ChatRequest } from '../api/types';
import { useChat } from '../inbox/chats';
import { RequestCard } from '../requests/Requests';
import { onLinkClick, pathOf } from '../router';
import { ViewPage } from '../shared/ViewPage';
import { MOST, useApprovals } from './approvals';

export function Approvals() {
  const { data, error, isPending, refetch } = useApprovals();
  const count = data?.length ?? 0;
  return (
    <ViewPage name="approvals" title="Approvals" busy={isPending}>
      {error && (
        <p role="alert" className="error">
          {messageOf(error)}{' '}
          <button type="button" onClick={() => void refetch()}>
            Try again
          </button>
        </p>
      )}
      {data && (
        <p className="view-summary" role="status" data-testid="approvals-summary">
          {count === 0
            ? 'Nothing is waiting for an answer.'
            : `${count}${count >= MOST ? '+' : ''} waiting for an answer, soonest deadline first.`}
        </p>
      )}
      {data && count > 0 && (
        <ol className="approval-list" aria-label="Pending requests of every chat">
          {data.map((request) => (
            <Approval key={request.id} request={request} />
          ))}
        </ol>
      )}
    </ViewPage>
  );
}

function Approval({ request }: { request: ChatRequest }) {
  const chat = useChat(request.chat_id).data;
  const path = pathOf({ name: 'chat', chatId: request.chat_id });
  return (
    <li className="approval" data-testid="approval" data-request-id={request.id} data-chat-id={request.chat_id}>
      <p className="approval-chat">
        <span className="approval-chat-label">In </span>
        <a href={path} data-testid="approval-chat" onClick={(e) => onLinkClick(e, path)}>
          <bdi>{chat?.title ?? 'this chat'}</bdi>
        </a>
      </p>
      <RequestCard request={request} />
    </li>
  );
}
