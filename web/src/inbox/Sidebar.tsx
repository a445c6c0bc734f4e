/** The left pane: the search box, then the search results while it has text, else the chat list. */
import type { InboxFilter, Route } from '../router';
import { SearchBox } from '../search/SearchBox';
import { SearchResults } from '../search/SearchResults';
import { useSearch } from '../search/search';
import type { ChatsView } from './chats';
import { ChatList } from './ChatList';

export function Sidebar({ route, view, filter }: { route: Route; view: ChatsView; filter: InboxFilter }) {
  const search = useSearch();
  return (
    <>
      <SearchBox search={search} />
      {search.text.trim() ? (
        <SearchResults route={route} search={search} />
      ) : (
        <ChatList view={view} filter={filter} selectedId={route.name === 'chat' ? route.chatId : undefined} />
      )}
    </>
  );
}
