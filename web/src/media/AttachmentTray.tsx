/**
 * The composer's attachments: the "Attach files" picker, a chip per file being attached (name,
 * size, progress, remove; or why it was refused), and file drops onto the chat.
 */
import { useRef, useState } from 'react';
import type { DragEvent } from 'react';
import { useAttachments } from './attachments';
import type { PendingAttachments } from './attachments';
import { formatBytes } from '../shared/bytes';

export function AttachButton({ attachments }: { attachments: PendingAttachments }) {
  const input = useRef<HTMLInputElement>(null);
  return (
    <>
      <button type="button" className="icon-button" aria-label="Attach files" onClick={() => input.current?.click()}>
        <svg aria-hidden="true" viewBox="0 0 24 24" width="20" height="20" className="icon">
          <path d="M21 11.5 12.6 19.9a5.5 5.5 0 0 1-7.8-7.8l8.5-8.5a3.7 3.7 0 0 1 5.2 5.2l-8.5 8.5a1.8 1.8 0 0 1-2.6-2.6l7.8-7.8" />
        </svg>
      </button>
      <input
        ref={input}
        type="file"
        multiple
        hidden
        data-testid="attach-input"
        onChange={(e) => {
          if (e.target.files) attachments.add(Array.from(e.target.files));
          e.target.value = '';
        }}
      />
    </>
  );
}

export function AttachmentTray({ attachments }: { attachments: PendingAttachments }) {
  const { items } = useAttachments(attachments);
  if (items.length === 0) return null;
  return (
    <ul className="attachment-tray" aria-label="Attachments">
      {items.map((item) => (
        <li
          key={item.localId}
          className={`pending-chip ${item.status}`}
          data-testid="pending-attachment"
          data-status={item.status}
        >
          <span className="file-name">{item.name}</span>
          <span className="file-size">{formatBytes(item.size)}</span>
          {item.status === 'failed' ? (
            <span className="pending-error" role="alert">
              <bdi>{item.name}</bdi> cannot be attached: {item.error}
            </span>
          ) : (
            <progress
              max={100}
              value={item.progress}
              aria-label={`Uploading ${item.name}`}
              aria-valuemin={0}
              aria-valuemax={100}
              aria-valuenow={item.progress}
            />
          )}
          {item.status === 'finishing' && <span className="file-size">Checking…</span>}
          <button
            type="button"
            className="quiet remove"
            aria-label={`Remove ${item.name}`}
            onClick={() => attachments.remove(item.localId)}
          >
            ×
          </button>
        </li>
      ))}
    </ul>
  );
}

/** Drop files anywhere on the chat to attach them; `dragging` shows the drop hint. */
export function useFileDrop(attachments: PendingAttachments) {
  const [dragging, setDragging] = useState(false);
  const hasFiles = (event: DragEvent) => Array.from(event.dataTransfer.types).includes('Files');
  return {
    dragging,
    handlers: {
      onDragOver: (event: DragEvent) => {
        if (!hasFiles(event)) return;
        event.preventDefault();
        event.dataTransfer.dropEffect = 'copy';
        setDragging(true);
      },
      onDragLeave: (event: DragEvent) => {
        // Leaving the chat itself (to outside it or the window), not moving between its children.
        if (!event.currentTarget.contains(event.relatedTarget as Node | null)) setDragging(false);
      },
      onDrop: (event: DragEvent) => {
        if (!event.dataTransfer.files.length) return;
        event.preventDefault();
        setDragging(false);
        attachments.add(Array.from(event.dataTransfer.files));
      },
    },
  };
}
