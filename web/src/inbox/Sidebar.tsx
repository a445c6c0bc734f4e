/** The left pane: the search box, then the search results while it has text, else the chat list. */
import type { Route } from '../router';
import { search } from '../search/search';
import { useStore } from '../state/store';
import { ChatList } from './ChatList';
import { SearchBox } from '../search/SearchBox';
import { SearchResults } from '../search/SearchResults';

export function Sidebar({ route }: { route: Route }) {
  const { text } = useStore(search);
  return (
    <>
      <SearchBox />
      {text.trim() ? (
        <SearchResults route={route} />
      ) : (
        <ChatList selectedId={route.name === 'chat' ? route.chatId : undefined} />
      )}
    </>
  );
}
