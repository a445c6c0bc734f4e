/**
 * The message box: Enter sends, Shift+Enter starts a new line. The draft survives a reload (kept
 * per chat in this tab's sessionStorage); the agent sees "typing" at most every few seconds.
 */
import { useEffect, useRef, useState } from 'react';
import type { FormEvent, KeyboardEvent } from 'react';
import { api } from '../api/client';
import type { ChatStore } from '../state/chat';

const TYPING_EVERY_MS = 4000;
const draftKey = (chatId: string) => `draft:${chatId}`;

export function Composer({ store, chatId }: { store: ChatStore; chatId: string }) {
  const [text, setText] = useState(() => sessionStorage.getItem(draftKey(chatId)) ?? '');
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
    if (!content) return;
    store.send(content);
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

  return (
    <form className="composer" onSubmit={send}>
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
        enterKeyHint="send"
      />
      <button type="submit" className="primary" disabled={!text.trim()}>
        Send
      </button>
    </form>
  );
}
