/** Edit a chat's tags, with suggestions from the instance's tag catalog (GET /tags/suggestions). */
import { useEffect, useRef, useState } from 'react';
import type { FormEvent } from 'react';
import { api } from '../api/client';
import type { Chat, TagSuggestion } from '../api/types';
import { chats } from '../state/chats';
import { messageOf } from '../state/chat';

export function TagsDialog({ chat, onClose }: { chat: Chat; onClose: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
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
    void save([...chat.tags, tag]);
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
        <input id="add-tag" value={draft} autoComplete="off" onChange={(e) => setDraft(e.target.value)} />
        <button type="submit" disabled={!draft.trim()}>
          Add
        </button>
      </form>
      {suggestions.length > 0 && (
        <div className="suggestions" aria-label="Suggestions" role="group">
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
