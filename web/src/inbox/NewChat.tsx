/** A new chat: agent and model pickers, an optional title and a first message. */
import { useState } from 'react';
import type { FormEvent } from 'react';
import { api, newIdempotencyKey } from '../api/client';
import { navigate, onLinkClick, pathOf } from '../router';
import { upsertChat } from './chats';
import { messageOf } from '../api/client';
import { useConfig } from '../shared/config';

export function NewChat() {
  const config = useConfig();
  const [agentId, setAgentId] = useState(config.agents[0]?.id ?? '');
  const agent = config.agents.find((a) => a.id === agentId);
  const defaultModel = agent?.defaultModelId ?? config.defaultModelIdForNewChats ?? config.models[0]?.id ?? '';
  const [modelId, setModelId] = useState<string | undefined>();
  const [title, setTitle] = useState('');
  const [firstMessage, setFirstMessage] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const [key] = useState(newIdempotencyKey);

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (!agentId || busy) return;
    setBusy(true);
    setError(undefined);
    try {
      const chat = await api.createChat(
        {
          agentIds: [agentId],
          modelId: modelId ?? defaultModel,
          ...(title.trim() ? { title: title.trim() } : {}),
          ...(firstMessage.trim() ? { firstMessage } : {}),
        },
        key,
      );
      upsertChat(chat);
      navigate(pathOf({ name: 'chat', chatId: chat.id }), { replace: true });
    } catch (caught) {
      setError(messageOf(caught));
      setBusy(false);
    }
  }

  if (config.agents.length === 0) {
    return (
      <div className="empty-detail">
        <p role="alert">No agents are configured on this instance yet.</p>
      </div>
    );
  }

  return (
    <section className="new-chat-page">
      <header className="chat-header">
        <a className="back" href="/" onClick={(e) => onLinkClick(e, '/')}>
          <span aria-hidden="true">‹</span>
          <span className="visually-hidden">Back to chats</span>
        </a>
        <h1>New chat</h1>
      </header>
      <form className="new-chat" onSubmit={(e) => void submit(e)}>
        <label htmlFor="new-agent">Agent</label>
        <select
          id="new-agent"
          value={agentId}
          onChange={(e) => {
            setAgentId(e.target.value);
            setModelId(undefined);
          }}
        >
          {config.agents.map((a) => (
            <option key={a.id} value={a.id}>
              {a.name}
            </option>
          ))}
        </select>
        {agent?.description && <p className="hint agent-description">{agent.description}</p>}
        <label htmlFor="new-model">Model</label>
        <select id="new-model" value={modelId ?? defaultModel} onChange={(e) => setModelId(e.target.value)}>
          {config.models.map((m) => (
            <option key={m.id} value={m.id}>
              {m.name}
            </option>
          ))}
        </select>
        <label htmlFor="new-title">Title</label>
        <input
          id="new-title"
          value={title}
          maxLength={config.titleMaxChars}
          placeholder="Optional: taken from the first message otherwise"
          onChange={(e) => setTitle(e.target.value)}
        />
        <label htmlFor="new-first">First message</label>
        <textarea id="new-first" rows={4} value={firstMessage} onChange={(e) => setFirstMessage(e.target.value)} />
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
        <button type="submit" className="primary" disabled={busy || !agentId}>
          {busy ? 'Creating…' : 'Create chat'}
        </button>
      </form>
    </section>
  );
}
