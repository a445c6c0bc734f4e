/**
 * The history, oldest at the top. It follows new messages while the reader is at the bottom (also
 * while images and other media load and grow: a ResizeObserver re-pins the bottom until the reader
 * scrolls away), keeps the reader's place when older pages are added above (read when the top
 * comes into view), and renders each message once unless it changes (streaming ones re-render per
 * frame at most). Answered and cancelled requests stand among the messages where they were asked.
 */
import { memo, useEffect, useLayoutEffect, useRef } from 'react';
import type { ChatRequest, Message } from '../api/types';
import type { ChatScreen } from './chat';
import type { OutgoingShown } from './outgoing';
import { agentName, useConfig } from '../shared/config';
import { Markdown, StreamingMarkdown } from '../shared/markdown/Markdown';
import { Attachments } from '../media/Attachments';
import { RequestRecord } from '../requests/RequestRecord';
import { clockTime, fullTime } from '../shared/time';

const NEAR_BOTTOM_PX = 80;

export function MessageList({ state, focusId }: { state: ChatScreen; focusId?: string }) {
  const scroller = useRef<HTMLDivElement>(null);
  const sentinel = useRef<HTMLDivElement>(null);
  const atBottom = useRef(true);
  const previousHeight = useRef(0);
  const previousFirst = useRef<string | undefined>(undefined);
  const focused = useRef<string | undefined>(undefined);
  const log = useRef<HTMLDivElement>(null);
  const lastTop = useRef(0);
  const loadOlder = useRef(state.loadOlder);
  loadOlder.current = state.loadOlder;

  // Older pages: when the sentinel at the top scrolls into view.
  useEffect(() => {
    const root = scroller.current;
    const target = sentinel.current;
    if (!root || !target) return;
    const observer = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting)) loadOlder.current();
      },
      { root, rootMargin: '400px 0px 0px 0px' },
    );
    observer.observe(target);
    return () => observer.disconnect();
  }, [state.chatId, state.hasOlder]);

  // Keep the place: at the bottom stays at the bottom; a page added above keeps what was visible.
  useLayoutEffect(() => {
    const root = scroller.current;
    if (!root) return;
    const first = state.messages[0]?.id;
    if (previousFirst.current && first !== previousFirst.current && !atBottom.current) {
      root.scrollTop += root.scrollHeight - previousHeight.current;
    } else if (atBottom.current) {
      root.scrollTop = root.scrollHeight;
    }
    previousFirst.current = first;
    previousHeight.current = root.scrollHeight;
  }, [state.messages, state.outgoing, state.requests.length, state.closed]);

  // Content that grows after it rendered (an image's metadata, then its pixels; a font; a code
  // block highlighted) or a frame that shrinks (the composer grows, a keyboard opens) keeps the
  // reader at the bottom while they have not scrolled away from it.
  useEffect(() => {
    const root = scroller.current;
    const content = log.current;
    if (!root || !content || typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(() => {
      if (!atBottom.current) return;
      root.scrollTop = root.scrollHeight;
      previousHeight.current = root.scrollHeight;
    });
    observer.observe(content);
    observer.observe(root);
    return () => observer.disconnect();
  }, []);

  // A message to show (a search hit): scrolled to the middle once it is rendered; the place is then kept.
  useLayoutEffect(() => {
    const root = scroller.current;
    if (!root || !focusId || focused.current === focusId) return;
    const target = root.querySelector<HTMLElement>(`[data-message-id="${CSS.escape(focusId)}"]`);
    if (!target) return;
    focused.current = focusId;
    atBottom.current = false;
    target.scrollIntoView({ block: 'center' });
    previousHeight.current = root.scrollHeight;
  }, [focusId, state.messages]);

  // Only the reader moving up leaves the bottom: a scroll event handled after content grew but
  // before the ResizeObserver re-pinned it (same frame) finds the bottom far away, yet nothing moved up.
  const onScroll = () => {
    const root = scroller.current;
    if (!root) return;
    if (root.scrollHeight - root.scrollTop - root.clientHeight < NEAR_BOTTOM_PX) atBottom.current = true;
    else if (root.scrollTop < lastTop.current - 1) atBottom.current = false;
    lastTop.current = root.scrollTop;
    previousHeight.current = root.scrollHeight;
  };

  return (
    <div className="messages" ref={scroller} onScroll={onScroll}>
      <div ref={sentinel} data-testid="load-older" className="load-older">
        {state.loadingOlder
          ? 'Loading earlier messages…'
          : state.hasOlder
            ? ''
            : state.loading
              ? ''
              : 'Start of the chat'}
      </div>
      {state.error && (
        <p role="alert" className="error">
          {state.error}{' '}
          <button type="button" onClick={state.reload}>
            Retry
          </button>
        </p>
      )}
      <div role="log" aria-label="Messages" aria-busy={state.loading} className="log" ref={log}>
        {timeline(state).map((item) =>
          'type' in item ? (
            <RequestRecord key={`request-${item.id}`} request={item} />
          ) : (
            <MessageItem key={item.id} message={item} focused={item.id === focusId} />
          ),
        )}
        {state.outgoing.map((outgoing) => (
          <OutgoingItem key={outgoing.localId} outgoing={outgoing} state={state} />
        ))}
      </div>
    </div>
  );
}

const MessageItem = memo(function MessageItem({ message, focused }: { message: Message; focused: boolean }) {
  const config = useConfig();
  const text = message.content_final ?? message.content_partial ?? '';
  const sender =
    message.role === 'user'
      ? 'You'
      : message.role === 'agent'
        ? agentName(config, message.sender_id)
        : message.role === 'system'
          ? 'System'
          : 'Tool';
  const mediaIds = mediaIdsOf(message.trace);
  const failure = message.role === 'system' && message.trace?.dispatchFailure === true;
  return (
    <article
      className={`message ${message.role}${failure ? ' failure' : ''}${focused ? ' focused' : ''}`}
      data-testid="message"
      data-message-id={message.id}
      data-role={message.role}
      data-stream-state={message.stream_state}
      data-status="sent"
      data-focused={focused || undefined}
      aria-label={`${sender}, ${fullTime(message.created_at)}`}
    >
      <header className="message-meta">
        <span className="sender">{sender}</span>
        <time dateTime={message.created_at} title={fullTime(message.created_at)}>
          {clockTime(message.created_at)}
        </time>
        {message.stream_state === 'streaming' && <span className="streaming-marker">writing…</span>}
        {message.stream_state === 'cancelled' && <span className="cancelled-marker">stopped</span>}
      </header>
      {text && (
        <div className="message-body" data-testid="message-body">
          {message.stream_state === 'streaming' ? <StreamingMarkdown text={text} /> : <Markdown text={text} />}
        </div>
      )}
      {mediaIds.length > 0 && <Attachments mediaIds={mediaIds} />}
    </article>
  );
});

function OutgoingItem({ outgoing, state }: { outgoing: OutgoingShown; state: ChatScreen }) {
  return (
    <article
      className={`message user ${outgoing.status}`}
      data-testid="message"
      data-role="user"
      data-status={outgoing.status}
      aria-label={outgoing.status === 'failed' ? 'Your message, not sent' : 'Your message, sending'}
    >
      <header className="message-meta">
        <span className="sender">You</span>
        <span>{outgoing.status === 'sending' ? 'Sending…' : 'Not sent'}</span>
      </header>
      {outgoing.content && (
        <div className="message-body" data-testid="message-body">
          <Markdown text={outgoing.content} />
        </div>
      )}
      {outgoing.mediaIds && <Attachments mediaIds={outgoing.mediaIds} />}
      {outgoing.status === 'failed' && (
        <p className="send-error" role="alert">
          {outgoing.error}{' '}
          <button type="button" onClick={() => state.retry(outgoing.localId)}>
            Retry
          </button>{' '}
          <button type="button" className="quiet" onClick={() => state.discard(outgoing.localId)}>
            Discard
          </button>
        </p>
      )}
    </article>
  );
}

/**
 * The messages with the closed requests among them, each request just after the messages created
 * before or with it. While older pages are unread, a request older than the oldest message read
 * waits for its page (it would otherwise stand at the top, out of its place).
 */
function timeline(state: ChatScreen): (Message | ChatRequest)[] {
  const { messages, closed, hasOlder } = state;
  if (closed.length === 0) return messages;
  const oldest = messages[0]?.created_at;
  const shown = hasOlder ? closed.filter((r) => oldest !== undefined && r.created_at >= oldest) : closed;
  const out: (Message | ChatRequest)[] = [];
  let next = 0;
  for (const message of messages) {
    while (next < shown.length && shown[next]!.created_at < message.created_at) out.push(shown[next++]!);
    out.push(message);
  }
  return out.concat(shown.slice(next));
}

function mediaIdsOf(trace: Record<string, unknown> | null): string[] {
  if (!trace) return [];
  if (Array.isArray(trace.mediaIds)) return trace.mediaIds.filter((id): id is string => typeof id === 'string');
  return typeof trace.mediaId === 'string' ? [trace.mediaId] : [];
}
