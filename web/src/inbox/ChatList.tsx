/** The inbox (or the archived chats): the service's order, kept live, with unread and pending badges. */
import { memo } from 'react';
import type { KeyboardEvent } from 'react';
import type { Chat } from '../api/types';
import { onLinkClick, pathOf } from '../router';
import type { InboxFilter } from '../router';
import { useChatList } from './chats';
import type { ChatsView } from './chats';
import { useFocusOnReturn } from '../shared/focus';
import { MutedIcon, PinIcon } from '../shared/Icons';
import { InboxFilters } from './InboxFilters';
import { previewText } from '../shared/markdown/plain';
import { relativeTime } from '../shared/time';

export function ChatList({
  view,
  filter,
  selectedId,
}: {
  view: ChatsView;
  filter: InboxFilter;
  selectedId: string | undefined;
}) {
  const { list, loading, error, retry } = useChatList(view, filter);
  const filtered = Boolean(filter.tag || filter.agentId);
  useFocusOnReturn(selectedId);
  return (
    <div className="chat-list-pane">
      <div className="list-header">
        <div className="view-switch" role="group" aria-label="Show">
          <a
            href="/"
            aria-current={view === 'inbox' ? 'page' : undefined}
            onClick={(e) => onLinkClick(e, pathOf({ name: 'inbox' }))}
          >
            Inbox
          </a>
          <a
            href="/archived"
            aria-current={view === 'archived' ? 'page' : undefined}
            onClick={(e) => onLinkClick(e, pathOf({ name: 'archived' }))}
          >
            Archived
          </a>
        </div>
        <a className="button primary" href="/new" onClick={(e) => onLinkClick(e, pathOf({ name: 'new' }))}>
          New chat
        </a>
      </div>
      <InboxFilters list={list} />
      {error && (
        <p role="alert" className="error">
          {error}{' '}
          <button type="button" onClick={retry}>
            Retry
          </button>
        </p>
      )}
      {!loading && !error && list.length === 0 && (
        <p className="empty">
          {filtered ? 'No chats match these filters.' : view === 'archived' ? 'No archived chats.' : 'No chats yet.'}
        </p>
      )}
      <ul className="chat-list" id="chat-list" data-testid="chat-list" aria-busy={loading} onKeyDown={moveByArrows}>
        {list.map((chat) => (
          <ChatItem key={chat.id} chat={chat} selected={chat.id === selectedId} />
        ))}
      </ul>
    </div>
  );
}

/** Up and Down move between the chats' links (Tab does too); Home and End go to the first and last. */
function moveByArrows(event: KeyboardEvent<HTMLUListElement>) {
  const links = [...event.currentTarget.querySelectorAll<HTMLAnchorElement>('[data-testid="chat-item"] a')];
  const at = links.indexOf(event.target as HTMLAnchorElement);
  if (at < 0) return;
  const to = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: links.length - 1 }[event.key];
  if (to === undefined || !links[to]) return;
  event.preventDefault();
  links[to].focus();
}

const ChatItem = memo(function ChatItem({ chat, selected }: { chat: Chat; selected: boolean }) {
  const href = pathOf({ name: 'chat', chatId: chat.id });
  const unread = chat.unread_count > 0;
  return (
    <li
      className={`chat-item${selected ? ' selected' : ''}${unread ? ' unread' : ''}`}
      data-testid="chat-item"
      data-chat-id={chat.id}
      data-pinned={chat.pinned}
    >
      <a href={href} onClick={(e) => onLinkClick(e, href)} aria-current={selected ? 'page' : undefined}>
        <span className="row">
          {chat.pinned && (
            <span className="pinned-marker" data-testid="pinned-marker" title="Pinned">
              <PinIcon />
            </span>
          )}
          <span className="chat-title" data-testid="chat-title">
            {chat.title}
          </span>
          {/* After the title, so the link's name starts with it. */}
          {chat.pinned && <span className="visually-hidden">, pinned</span>}
          {chat.notifications_muted && (
            <span className="muted-marker" title="Muted" role="img" aria-label="Muted">
              <MutedIcon />
            </span>
          )}
          {chat.last_message_at && (
            <time className="when" dateTime={chat.last_message_at}>
              {relativeTime(chat.last_message_at)}
            </time>
          )}
        </span>
        <span className="row">
          <span className="chat-preview" data-testid="chat-preview">
            {chat.last_message_role === 'user' && chat.last_message_preview ? 'You: ' : ''}
            {chat.last_message_preview ? previewText(chat.last_message_preview) : 'No messages yet'}
          </span>
          {chat.pending_requests_count > 0 && (
            <span
              className="badge pending"
              data-testid="pending-badge"
              aria-label={`${chat.pending_requests_count} pending requests`}
            >
              {chat.pending_requests_count}
            </span>
          )}
          {unread && (
            <span className="badge unread" data-testid="unread-badge" aria-label={`${chat.unread_count} unread`}>
              {chat.unread_count}
            </span>
          )}
        </span>
      </a>
    </li>
  );
});
