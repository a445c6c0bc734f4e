/**
 * The results view that replaces the chat list while the search box has text: chat hits and
 * message hits as two sections, each message hit with its highlighted snippet (as plain text) and opening its
 * chat at that message; more hits by cursor.
 */
import { useMemo } from 'react';
import type { ChatHit, MessageHit } from '../api/types';
import { plainSnippet } from './plain-snippet';
import { onLinkClick, pathOf } from '../router';
import type { Route } from '../router';
import type { SearchState } from './search';
import { Snippet } from './Snippet';
import { highlightTitle, parseSnippet } from './snippet';

export function SearchResults({ route, search }: { route: Route; search: SearchState }) {
  const { query, chats, messages, loading, loadingMore, hasMore, error } = search;
  const openChat = route.name === 'chat' ? route : undefined;
  const count = chats.length + messages.length;
  return (
    <div className="search-results" data-testid="search-results" aria-busy={loading}>
      <p className="search-status" role="status">
        {!query
          ? loading
            ? 'Searching…'
            : ''
          : count === 0
            ? `No results for “${query}”.`
            : `${count}${hasMore ? '+' : ''} ${count === 1 ? 'result' : 'results'} for “${query}”`}
      </p>
      {error && (
        <p role="alert" className="error">
          {error}{' '}
          <button type="button" onClick={() => search.run()}>
            Retry
          </button>
        </p>
      )}
      {chats.length > 0 && (
        <section aria-labelledby="search-chats">
          <h2 id="search-chats">Chats</h2>
          <ul>
            {chats.map((hit) => (
              <ChatHitItem
                key={hit.id}
                hit={hit}
                query={query}
                current={openChat?.chatId === hit.id && !openChat.messageId}
              />
            ))}
          </ul>
        </section>
      )}
      {messages.length > 0 && (
        <section aria-labelledby="search-messages">
          <h2 id="search-messages">Messages</h2>
          <ul>
            {messages.map((hit) => (
              <MessageHitItem key={hit.id} hit={hit} current={openChat?.messageId === hit.id} />
            ))}
          </ul>
        </section>
      )}
      {hasMore && (
        <button type="button" className="more-results" disabled={loadingMore} onClick={() => search.more()}>
          {loadingMore ? 'Loading more…' : 'More results'}
        </button>
      )}
    </div>
  );
}

function ChatHitItem({ hit, query, current }: { hit: ChatHit; query: string; current: boolean }) {
  const href = pathOf({ name: 'chat', chatId: hit.id });
  return (
    <li className="search-hit" data-testid="search-hit" data-kind="chat" data-chat-id={hit.id}>
      <a href={href} onClick={(e) => onLinkClick(e, href)} aria-current={current ? 'page' : undefined}>
        <Snippet parts={highlightTitle(hit.snippet, query)} />
      </a>
    </li>
  );
}

function MessageHitItem({ hit, current }: { hit: MessageHit; current: boolean }) {
  const href = pathOf({ name: 'chat', chatId: hit.chat_id, messageId: hit.id });
  // The excerpt as the text it reads as (markdown markup left out), the service's marks kept.
  const parts = useMemo(() => plainSnippet(parseSnippet(hit.snippet)), [hit.snippet]);
  return (
    <li
      className="search-hit"
      data-testid="search-hit"
      data-kind="message"
      data-chat-id={hit.chat_id}
      data-message-id={hit.id}
    >
      <a href={href} onClick={(e) => onLinkClick(e, href)} aria-current={current ? 'page' : undefined}>
        <span className="hit-chat">{hit.chat_title}</span>
        <Snippet parts={parts} />
      </a>
    </li>
  );
}
