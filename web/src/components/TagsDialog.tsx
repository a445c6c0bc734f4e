/**
 * Edit a chat's tags, with suggestions from the instance's tag catalog (GET /tags/suggestions).
 * Enter adds what is typed; the suggestions are reached with Tab or the arrow keys (Down from the
 * box to the first, arrows between them, Up from the first back to the box).
 */
import { useEffect, useRef, useState } from 'react';
import type { FormEvent, KeyboardEvent } from 'react';
import { api } from '../api/client';
import type { Chat, TagSuggestion } from '../api/types';
import { chats } from '../state/chats';
import { messageOf } from '../state/chat';

export function TagsDialog({ chat, onClose }: { chat: Chat; onClose: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const input = useRef<HTMLInputElement>(null);
  const suggestionList = useRef<HTMLDivElement>(null);
  const [draft, setDraft] = useState('');
  const [suggestions, setSuggestions] = useState<TagSuggestion[]>([]);
  const [error, setError] = useState<string | undefined>();

  useEffect(() => {
    dialog.current?.showModal();
  }, []);

  useEffect(() => {
    const q = draft.trim();
    if (!q) {
      setSuggestions([]);
      return;
    }
    const controller = new AbortController();
    const timer = setTimeout(() => {
      api
        .tagSuggestions(q, controller.signal)
        .then((r) => setSuggestions(r.data.filter((s) => !chat.tags.includes(s.name))))
        .catch(() => {});
    }, 120);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [draft, chat.tags]);

  async function save(tags: string[]) {
    setError(undefined);
    try {
      chats.upsert(await api.updateChat(chat.id, { tags }));
    } catch (caught) {
      setError(messageOf(caught));
    }
  }

  function add(event?: FormEvent, name = draft) {
    event?.preventDefault();
    const tag = name.trim();
    if (!tag || chat.tags.includes(tag)) {
      setDraft('');
      return;
    }
    setDraft('');
    input.current?.focus();
    void save([...chat.tags, tag]);
  }

  function moveAmongSuggestions(event: KeyboardEvent<HTMLElement>) {
    const buttons = [...(suggestionList.current?.querySelectorAll('button') ?? [])];
    if (!buttons.length) return;
    const at = buttons.indexOf(document.activeElement as HTMLButtonElement);
    let next: HTMLElement | undefined;
    if (event.key === 'ArrowDown' || event.key === 'ArrowRight') {
      if (event.currentTarget === input.current && event.key === 'ArrowRight') return;
      next = buttons[Math.min(at + 1, buttons.length - 1)];
    } else if (event.key === 'ArrowUp' || event.key === 'ArrowLeft') {
      if (at === -1) return;
      next = at === 0 ? (input.current ?? undefined) : buttons[at - 1];
    } else return;
    event.preventDefault();
    next?.focus();
  }

  return (
    <dialog ref={dialog} className="tags-dialog" aria-labelledby="tags-title" onClose={onClose}>
      <h2 id="tags-title">Tags</h2>
      <ul className="current-tags">
        {chat.tags.length === 0 && <li className="hint">No tags yet.</li>}
        {chat.tags.map((tag) => (
          <li key={tag} className="tag">
            {tag}
            <button
              type="button"
              className="quiet"
              aria-label={`Remove tag ${tag}`}
              onClick={() => void save(chat.tags.filter((t) => t !== tag))}
            >
              ×
            </button>
          </li>
        ))}
      </ul>
      <form onSubmit={add} className="add-tag">
        <label htmlFor="add-tag">Add tag</label>
        <input
          id="add-tag"
          ref={input}
          value={draft}
          autoComplete="off"
          onChange={(e) => setDraft(e.target.value)}
          onKeyDown={moveAmongSuggestions}
        />
        <button type="submit" disabled={!draft.trim()}>
          Add
        </button>
      </form>
      {suggestions.length > 0 && (
        <div
          className="suggestions"
          aria-label="Suggestions"
          role="group"
          ref={suggestionList}
          onKeyDown={moveAmongSuggestions}
        >
          {suggestions.map((s) => (
            <button key={s.name} type="button" data-testid="tag-suggestion" onClick={() => add(undefined, s.name)}>
              {s.name}
            </button>
          ))}
        </div>
      )}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <button type="button" className="primary" onClick={() => dialog.current?.close()}>
        Done
      </button>
    </dialog>
  );
}
