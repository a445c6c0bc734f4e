/**
 * Filters above the chat list: by tag (typed, with the tags of the chats read so far and the
 * catalog's suggestions for what is typed) and by agent (the configured agents). They live in the
 * URL (router.ts), so a reload keeps them; the list reads them from there (App → Sidebar → ChatList).
 */
import { useEffect, useMemo, useState } from 'react';
import { api } from '../api/client';
import { setInboxFilter, useInboxFilter } from '../router';
import type { Chat } from '../api/types';
import { agentName, useConfig } from '../shared/config';

/** `list`: the chats listed now (their tags are offered beside the catalog's suggestions). */
export function InboxFilters({ list }: { list: readonly Chat[] }) {
  const filter = useInboxFilter();
  const config = useConfig();
  const [draft, setDraft] = useState(filter.tag ?? '');
  const [suggested, setSuggested] = useState<string[]>([]);

  useEffect(() => setDraft(filter.tag ?? ''), [filter.tag]);

  useEffect(() => {
    const q = draft.trim();
    if (!q) {
      setSuggested([]);
      return;
    }
    const controller = new AbortController();
    const timer = setTimeout(() => {
      api
        .tagSuggestions(q, controller.signal)
        .then((r) => setSuggested(r.data.map((s) => s.name)))
        .catch(() => {});
    }, 150);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [draft]);

  const tagOptions = useMemo(() => {
    const names = new Set(suggested);
    for (const chat of list) for (const tag of chat.tags) names.add(tag);
    if (filter.tag) names.add(filter.tag);
    return [...names].sort((a, b) => a.localeCompare(b));
  }, [list, suggested, filter.tag]);

  const agents = config.agents.map((a) => a.id);
  if (filter.agentId && !agents.includes(filter.agentId)) agents.push(filter.agentId);

  const applyTag = (value: string) => {
    const tag = value.trim();
    if (tag !== (filter.tag ?? '')) setInboxFilter({ tag: tag || undefined });
  };

  return (
    <div className="inbox-filters" role="group" aria-label="Filters">
      <form
        className="tag-filter"
        onSubmit={(event) => {
          event.preventDefault();
          applyTag(draft);
        }}
      >
        <input
          aria-label="Filter by tag"
          placeholder="Filter by tag"
          list="tag-filter-options"
          autoComplete="off"
          value={draft}
          onChange={(event) => {
            const value = event.target.value;
            setDraft(value);
            // A pick from the list (not typing), or an emptied box, applies at once.
            const input = event.nativeEvent as Partial<InputEvent>;
            if (!value.trim() || !input.inputType || input.inputType === 'insertReplacementText') applyTag(value);
          }}
          onBlur={() => applyTag(draft)}
        />
        <datalist id="tag-filter-options">
          {tagOptions.map((tag) => (
            <option key={tag} value={tag} />
          ))}
        </datalist>
        {filter.tag && (
          <button
            type="button"
            className="quiet clear-filter"
            aria-label="Clear tag filter"
            onClick={() => setInboxFilter({ tag: undefined })}
          >
            ×
          </button>
        )}
      </form>
      <select
        aria-label="Filter by agent"
        value={filter.agentId ?? ''}
        onChange={(event) => setInboxFilter({ agentId: event.target.value || undefined })}
      >
        <option value="">All agents</option>
        {agents.map((id) => (
          <option key={id} value={id}>
            {agentName(config, id)}
          </option>
        ))}
      </select>
    </div>
  );
}
