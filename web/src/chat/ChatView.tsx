/** One chat: header and actions, the message history, pending requests and the composer. */
import { Fragment, useEffect, useMemo, useRef, useState } from 'react';
import { live } from '../live/events';
import { onLinkClick, pathOf } from '../router';
import { PendingAttachments } from '../media/attachments';
import { ChatStore } from './chat';
import { chats } from '../inbox/chats';
import { agentName, useConfig } from '../shared/config';
import { useStore } from '../state/store';
import { useFileDrop } from '../media/AttachmentTray';
import { ChatToolbar } from './ChatToolbar';
import { Composer } from './Composer';
import { useFocusOnOpen } from '../shared/focus';
import { MessageList } from './MessageList';
import { Requests } from '../requests/Requests';
import { useMarkReadWhenSeen } from './read-marker';
import { useTags } from './tags';

export function ChatView({ chatId, messageId }: { chatId: string; messageId?: string }) {
  const store = useMemo(() => new ChatStore(chatId), [chatId]);
  const state = useStore(store);
  const { byId } = useStore(chats);
  const chat = byId.get(chatId);
  const config = useConfig();
  const [missing, setMissing] = useState(false);
  const [reveal, setReveal] = useState<{ messageId: string; found: boolean } | undefined>();
  useFocusOnOpen(chatId);
  // The attachments read the configuration when a file comes (limits, types): a newer one applies.
  const configNow = useRef(config);
  configNow.current = config;
  const attachments = useMemo(() => new PendingAttachments(chatId, () => configNow.current), [chatId]);
  useEffect(() => () => attachments.dispose(), [attachments]);
  const drop = useFileDrop(attachments);

  useEffect(() => {
    store.attach();
    const unsubscribe = live.subscribe(store.onEvent);
    const unresync = live.onResync(() => {
      void store.load();
      chats.refresh(chatId);
    });
    // On the page's first load this waits for the stream to open, so that it needs no second read.
    const cancel = live.whenLive(() => {
      void store.load();
      void chats.refreshNow(chatId).then((found) => setMissing(!found));
    });
    return () => {
      cancel();
      unsubscribe();
      unresync();
      store.dispose();
    };
  }, [store, chatId]);

  // Opened at a message (a search hit): read back until it is there, then show it.
  useEffect(() => {
    if (!messageId) return;
    let current = true;
    void store.reveal(messageId).then((found) => current && setReveal({ messageId, found }));
    return () => {
      current = false;
    };
  }, [store, messageId]);
  const focusId = reveal?.found && reveal.messageId === messageId ? messageId : undefined;

  // Reading the chat marks it read, when the person sees it (tab visible, at the newest message).
  useMarkReadWhenSeen(chat);
  const tags = useTags(chat);

  useEffect(() => {
    // The title isolated (U+2068…U+2069): a right-to-left override in it does not flip the app's name.
    document.title = chat ? `\u2068${chat.title}\u2069 · ${config.appName}` : config.appName;
    return () => {
      document.title = config.appName;
    };
  }, [chat, config.appName]);

  if (missing && !chat) {
    return (
      <div className="empty-detail">
        <p role="alert">This chat does not exist (any more).</p>
        <a href="/" onClick={(e) => onLinkClick(e, '/')}>
          Back to chats
        </a>
      </div>
    );
  }

  const typing = Object.keys(state.typing);
  return (
    <section
      className={`chat-view${drop.dragging ? ' dropping' : ''}`}
      aria-label={chat?.title ?? 'Chat'}
      {...drop.handlers}
    >
      <header className="chat-header">
        <a
          className="back"
          href="/"
          onClick={(e) => onLinkClick(e, pathOf({ name: chat?.is_archived ? 'archived' : 'inbox' }))}
        >
          <span aria-hidden="true">‹</span>
          <span className="visually-hidden">Back to chats</span>
        </a>
        <div className="chat-heading">
          <h1 data-testid="chat-heading" tabIndex={-1} dir="auto">
            {chat?.title ?? '…'}
          </h1>
          {chat && (
            <p className="chat-meta">
              {/* Each provided name isolated: a right-to-left override in one does not reorder the next. */}
              <span data-testid="chat-agents">
                {chat.agent_ids.map((id, i) => (
                  <Fragment key={id}>
                    {i > 0 && ', '}
                    <bdi>{agentName(config, id)}</bdi>
                  </Fragment>
                ))}
                {' · '}
                <bdi data-testid="chat-model">
                  {config.models.find((m) => m.id === chat.model_id)?.name ?? chat.model_id}
                </bdi>
              </span>
              {tags.map((tag) => (
                <span key={tag} className="tag" data-testid="chat-tag" dir="auto">
                  {tag}
                </span>
              ))}
            </p>
          )}
        </div>
        {chat && <ChatToolbar chat={chat} />}
      </header>
      {reveal && !reveal.found && reveal.messageId === messageId && (
        <p className="notice" role="status">
          That message is not in this chat any more.
        </p>
      )}
      <MessageList store={store} state={state} focusId={focusId} />
      <div className="typing-slot">
        {typing.length > 0 && (
          <p className="typing" role="status" data-testid="typing-indicator">
            {typing.map((id, i) => (
              <Fragment key={id}>
                {i > 0 && ', '}
                <bdi>{agentName(config, id)}</bdi>
              </Fragment>
            ))}{' '}
            {typing.length > 1 ? 'are' : 'is'} typing…
          </p>
        )}
      </div>
      {state.requests.length > 0 && <Requests store={store} requests={state.requests} />}
      <Composer store={store} chatId={chatId} attachments={attachments} />
    </section>
  );
}
