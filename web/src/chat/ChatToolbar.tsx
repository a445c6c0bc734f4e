/**
 * A chat's actions: rename, pin, archive, mute, mark unread, tags. On a wide screen they sit in the
 * header; on a phone behind "Chat actions". Each answer updates the inbox at once (its PATCH answer,
 * or a re-read after archive and mark-unread); the live event confirms it.
 */
import { useState } from 'react';
import type { FormEvent } from 'react';
import type { api } from '../api/client';
import type { Chat } from '../api/types';
import { navigate } from '../router';
import { archiveChat, markUnread, updateChat } from '../inbox/chats';
import { messageOf } from '../api/client';
import { useConfig } from '../shared/config';
import { TagsDialog } from './TagsDialog';

export function ChatToolbar({ chat }: { chat: Chat }) {
  const [menuOpen, setMenuOpen] = useState(false);
  const [renaming, setRenaming] = useState(false);
  const [tagsOpen, setTagsOpen] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const config = useConfig();

  async function run(action: () => Promise<unknown>) {
    setError(undefined);
    try {
      await action();
    } catch (caught) {
      setError(messageOf(caught));
    }
  }

  // Rename and Tags open a form or dialog of their own: the phone's menu closes behind them.
  const openOwn = (open: (value: boolean) => void) => {
    setMenuOpen(false);
    open(true);
  };

  const update = (body: Parameters<typeof api.updateChat>[1]) => run(() => updateChat(chat.id, body));

  return (
    <div className="chat-actions">
      <button
        type="button"
        className="actions-toggle"
        aria-expanded={menuOpen}
        aria-controls={`actions-${chat.id}`}
        onClick={() => setMenuOpen(!menuOpen)}
      >
        Chat actions
      </button>
      <div
        id={`actions-${chat.id}`}
        className={`toolbar${menuOpen ? ' open' : ''}`}
        role="toolbar"
        aria-label="Chat actions"
      >
        <button type="button" onClick={() => openOwn(setRenaming)}>
          Rename
        </button>
        <button type="button" aria-pressed={chat.pinned} onClick={() => void update({ pinned: !chat.pinned })}>
          {chat.pinned ? 'Unpin' : 'Pin'}
        </button>
        <button type="button" onClick={() => void run(() => archiveChat(chat.id, !chat.is_archived))}>
          {chat.is_archived ? 'Unarchive' : 'Archive'}
        </button>
        <button
          type="button"
          aria-pressed={chat.notifications_muted}
          onClick={() => void update({ notificationsMuted: !chat.notifications_muted })}
        >
          {chat.notifications_muted ? 'Unmute' : 'Mute'}
        </button>
        <button
          type="button"
          onClick={() =>
            void run(async () => {
              // Leave the chat first: while it is open, an unread count makes it read again.
              navigate(chat.is_archived ? '/archived' : '/');
              await markUnread(chat.id);
            })
          }
        >
          Mark unread
        </button>
        <button type="button" onClick={() => openOwn(setTagsOpen)}>
          Tags
        </button>
        {config.models.length > 1 && (
          <label className="model-picker">
            <span className="visually-hidden">Model</span>
            <select value={chat.model_id} onChange={(e) => void update({ modelId: e.target.value })}>
              {config.models.map((m) => (
                <option key={m.id} value={m.id}>
                  {m.name}
                </option>
              ))}
            </select>
          </label>
        )}
      </div>
      {renaming && (
        <RenameForm
          chat={chat}
          maxLength={config.titleMaxChars}
          onDone={() => setRenaming(false)}
          onSave={(title) => update({ title })}
        />
      )}
      {tagsOpen && <TagsDialog chat={chat} onClose={() => setTagsOpen(false)} />}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </div>
  );
}

function RenameForm({
  chat,
  maxLength,
  onSave,
  onDone,
}: {
  chat: Chat;
  maxLength: number;
  onSave: (title: string) => Promise<void>;
  onDone: () => void;
}) {
  const [title, setTitle] = useState(chat.title);
  async function submit(event: FormEvent) {
    event.preventDefault();
    const trimmed = title.trim();
    if (!trimmed) return;
    if (trimmed !== chat.title) await onSave(trimmed);
    onDone();
  }
  return (
    <form className="rename" onSubmit={(e) => void submit(e)}>
      <label htmlFor={`title-${chat.id}`} className="visually-hidden">
        Chat title
      </label>
      <input
        id={`title-${chat.id}`}
        value={title}
        maxLength={maxLength}
        autoFocus
        onChange={(e) => setTitle(e.target.value)}
        onKeyDown={(e) => e.key === 'Escape' && onDone()}
      />
      <button type="submit" className="primary" disabled={!title.trim()}>
        Save
      </button>
      <button type="button" onClick={onDone}>
        Cancel
      </button>
    </form>
  );
}
