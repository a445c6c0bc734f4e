/**
 * The search box at the top of the chat list: typing searches after a pause, Enter at once,
 * Escape clears; the scope picks chat titles, messages or both (GET /search's `scope`).
 */
import type { SearchScope } from '../api/types';
import type { SearchState } from './search';

const SCOPES: { value: SearchScope; label: string }[] = [
  { value: 'all', label: 'Everything' },
  { value: 'titles', label: 'Chat titles' },
  { value: 'messages', label: 'Messages' },
];

export function SearchBox({ search }: { search: SearchState }) {
  const { text, scope } = search;
  return (
    <form
      role="search"
      className="search-box"
      onSubmit={(event) => {
        event.preventDefault();
        search.run();
      }}
    >
      <input
        type="search"
        aria-label="Search"
        placeholder="Search"
        autoComplete="off"
        enterKeyHint="search"
        value={text}
        onChange={(event) => search.setText(event.target.value)}
        onKeyDown={(event) => {
          if (event.key !== 'Escape' || !text) return;
          event.preventDefault();
          search.clear();
        }}
      />
      <select
        aria-label="Search in"
        value={scope}
        onChange={(event) => search.setScope(event.target.value as SearchScope)}
      >
        {SCOPES.map((s) => (
          <option key={s.value} value={s.value}>
            {s.label}
          </option>
        ))}
      </select>
    </form>
  );
}
