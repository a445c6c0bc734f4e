/**
 * Edit a chat's tags, with suggestions from the instance's tag catalog (GET /tags/suggestions).
 * Enter adds what is typed; the suggestions are reached with Tab or the arrow keys (Down from the
 * box to the first, arrows between them, Up from the first back to the box). Each add or remove is
 * queued as that change (chat/tag-edits.ts), so quick edits and another tab's edits are kept.
 */
import { useEffect, useRef, useState } from 'react';
import type { FormEvent, KeyboardEvent } from 'react';
import { api } from '../api/client';
import type { Chat, TagSuggestion } from '../api/types';
import { addTag, removeTag, useTagEdits } from './tag-edits';
import { useTags } from './tags';

export function TagsDialog({ chat, onClose }: { chat: Chat; onClose: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const input = useRef<HTMLInputElement>(null);
  const suggestionList = useRef<HTMLDivElement>(null);
  const [draft, setDraft] = useState('');
  const [suggestions, setSuggestions] = useState<TagSuggestion[]>([]);
  const { error } = useTagEdits(chat.id);
  const tags = useTags(chat);
  const tagKey = tags.join('\n');

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
        .then((r) => setSuggestions(r.data.filter((s) => !tagKey.split('\n').includes(s.name))))
        .catch(() => {});
    }, 120);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [draft, tagKey]);

  function add(event?: FormEvent, name = draft) {
    event?.preventDefault();
    const tag = name.trim();
    setDraft('');
    if (!tag || tags.includes(tag)) return;
    input.current?.focus();
    addTag(chat.id, tag);
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
        {tags.length === 0 && <li className="hint">No tags yet.</li>}
        {tags.map((tag) => (
          <li key={tag} className="tag">
            <bdi>{tag}</bdi>
            <button
              type="button"
              className="quiet"
              aria-label={`Remove tag ${tag}`}
              onClick={() => removeTag(chat.id, tag)}
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
