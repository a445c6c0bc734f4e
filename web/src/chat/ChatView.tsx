/** One chat: header and actions, the message history, pending requests and the composer. */
import { Fragment, useEffect, useMemo, useRef, useState } from 'react';
import { ApiError } from '../api/client';
import { onLinkClick, pathOf } from '../router';
import { PendingAttachments } from '../media/attachments';
import { useChatScreen } from './chat';
import { setRevealing } from './messages';
import { useChat } from '../inbox/chats';
import { agentName, useConfig } from '../shared/config';
import { useFileDrop } from '../media/AttachmentTray';
import { ChatToolbar } from './ChatToolbar';
import { Composer } from './Composer';
import { useFocusOnOpen } from '../shared/focus';
import { MessageList } from './MessageList';
import { Requests } from '../requests/Requests';
import { useMarkReadWhenSeen } from './read-marker';
import { useTags } from './tags';
import { useTyping } from './typing';

export function ChatView({ chatId, messageId }: { chatId: string; messageId?: string }) {
  const state = useChatScreen(chatId);
  const chatQuery = useChat(chatId);
  const chat = chatQuery.data;
  const missing = chatQuery.error instanceof ApiError && chatQuery.error.status === 404;
  const config = useConfig();
  const [reveal, setReveal] = useState<{ messageId: string; found: boolean } | undefined>();
  useFocusOnOpen(chatId);
  // The attachments read the configuration when a file comes (limits, types): a newer one applies.
  const configNow = useRef(config);
  configNow.current = config;
  const attachments = useMemo(() => new PendingAttachments(chatId, () => configNow.current), [chatId]);
  useEffect(() => () => attachments.dispose(), [attachments]);
  const drop = useFileDrop(attachments);

  // Opened at a message (a search hit): read back, larger pages at a time, until it is there.
  const { messages, hasOlder, loading, loadingOlder, error, loadOlder } = state;
  useEffect(() => {
    if (!messageId || loading || loadingOlder) return;
    const found = messages.some((m) => m.id === messageId);
    if (found || !hasOlder || error) {
      setRevealing(chatId, false);
      setReveal((r) => (r?.messageId === messageId && r.found === found ? r : { messageId, found }));
      return;
    }
    setRevealing(chatId, true);
    loadOlder();
  }, [chatId, messageId, messages, hasOlder, loading, loadingOlder, error, loadOlder]);
  useEffect(() => () => setRevealing(chatId, false), [chatId]);
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

  const typing = useTyping(chatId);
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
      <MessageList state={state} focusId={focusId} />
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
      {state.requests.length > 0 && <Requests requests={state.requests} />}
      <Composer send={state.send} chatId={chatId} attachments={attachments} />
    </section>
  );
}
