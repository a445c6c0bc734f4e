/**
 * The message box: Enter sends, Shift+Enter starts a new line. The draft survives a reload (kept
 * per chat in this tab's sessionStorage); the agent sees "typing" at most every few seconds.
 */
import { useEffect, useRef, useState } from 'react';
import type { ClipboardEvent, FormEvent, KeyboardEvent } from 'react';
import { api } from '../api/client';
import { useAttachments } from '../media/attachments';
import type { PendingAttachments } from '../media/attachments';
import type { ChatScreen } from './chat';
import { AttachButton, AttachmentTray } from '../media/AttachmentTray';
import { VoiceRecorder } from '../media/VoiceRecorder';

const TYPING_EVERY_MS = 4000;
const draftKey = (chatId: string) => `draft:${chatId}`;

export function Composer({
  send: sendMessage,
  chatId,
  attachments,
}: {
  send: ChatScreen['send'];
  chatId: string;
  attachments: PendingAttachments;
}) {
  const [text, setText] = useState(() => sessionStorage.getItem(draftKey(chatId)) ?? '');
  useAttachments(attachments);
  // A message may be only attachments (contract §5.4.1 rule 13); it waits for every upload.
  const canSend = !attachments.uploading && (text.trim() !== '' || attachments.mediaIds.length > 0);
  const lastTyping = useRef(0);
  const box = useRef<HTMLTextAreaElement>(null);

  useEffect(() => {
    if (text) sessionStorage.setItem(draftKey(chatId), text);
    else sessionStorage.removeItem(draftKey(chatId));
  }, [chatId, text]);

  // Grow with the text, up to a limit (CSS max-height), then scroll.
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    el.style.height = 'auto';
    el.style.height = `${el.scrollHeight}px`;
  }, [text]);

  function send(event?: FormEvent) {
    event?.preventDefault();
    const content = text.trim();
    if (!canSend) return;
    sendMessage(content, attachments.mediaIds);
    attachments.sent();
    setText('');
    box.current?.focus();
  }

  function onKeyDown(event: KeyboardEvent<HTMLTextAreaElement>) {
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      send();
    }
  }

  function onChange(value: string) {
    setText(value);
    const now = Date.now();
    if (value.trim() && now - lastTyping.current > TYPING_EVERY_MS) {
      lastTyping.current = now;
      void api.userTyping(chatId).catch(() => {});
    }
  }

  function onPaste(event: ClipboardEvent<HTMLTextAreaElement>) {
    if (event.clipboardData.files.length === 0) return;
    event.preventDefault();
    attachments.add(Array.from(event.clipboardData.files));
  }

  return (
    <form className="composer" onSubmit={send}>
      <AttachmentTray attachments={attachments} />
      <label htmlFor="composer-text" className="visually-hidden">
        Message
      </label>
      <textarea
        id="composer-text"
        ref={box}
        rows={1}
        value={text}
        placeholder="Write a message…"
        onChange={(e) => onChange(e.target.value)}
        onKeyDown={onKeyDown}
        onPaste={onPaste}
        enterKeyHint="send"
      />
      {/* After the text in reading order; on phones in a row under it, so the text has the width. */}
      <AttachButton attachments={attachments} />
      <VoiceRecorder attachments={attachments} />
      <button type="submit" className="primary" disabled={!canSend}>
        Send
      </button>
    </form>
  );
}
