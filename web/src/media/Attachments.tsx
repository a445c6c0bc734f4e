/**
 * A message's media: image thumbnails (a click opens the original in a dialog), inline audio,
 * and download chips with name, size and type for everything else.
 */
import { useEffect, useRef, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { api } from '../api/client';
import { keys } from '../api/query-client';
import type { Media } from '../api/types';
import { formatBytes } from '../shared/bytes';

export { formatBytes };

export function Attachments({ mediaIds }: { mediaIds: string[] }) {
  return (
    <ul className="attachments">
      {mediaIds.map((id) => (
        <li key={id}>
          <Attachment id={id} />
        </li>
      ))}
    </ul>
  );
}

function Attachment({ id }: { id: string }) {
  // A medium's metadata does not change once stored: read once per page, shared by every message showing it.
  const { data: media, isError } = useQuery({
    queryKey: keys.media(id),
    queryFn: () => api.media(id),
    gcTime: Infinity,
  });
  if (isError) return <span className="file-chip">Attachment unavailable</span>;
  if (!media) return <span className="file-chip">…</span>;
  const common = { 'data-testid': 'attachment', 'data-kind': media.kind, 'data-media-id': id };
  if (media.kind === 'image') return <ImageAttachment media={media} common={common} />;
  if (media.kind === 'audio') {
    return (
      <figure className="audio-attachment" {...common}>
        <audio controls preload="metadata" src={api.fileUrl(id)} aria-label={media.filename} />
        <figcaption>
          <bdi>{media.filename}</bdi> · {formatBytes(media.byte_size)}
        </figcaption>
      </figure>
    );
  }
  return (
    <a className="file-chip" href={api.fileUrl(id)} download={media.filename} {...common}>
      <span className="file-name">{media.filename}</span>
      <span className="file-size">
        {formatBytes(media.byte_size)} · <bdi>{media.content_type}</bdi>
      </span>
    </a>
  );
}

function ImageAttachment({ media, common }: { media: Media; common: Record<string, string> }) {
  const [open, setOpen] = useState(false);
  // The thumbnail may still be in the making (contract §8.4): the original stands in.
  const [src, setSrc] = useState(api.thumbnailUrl(media.id));
  return (
    <>
      <button
        type="button"
        className="image-link"
        aria-label={`View ${media.filename}`}
        onClick={() => setOpen(true)}
        {...common}
      >
        <img
          src={src}
          alt={media.filename}
          loading="lazy"
          onError={() => setSrc((now) => (now === api.fileUrl(media.id) ? now : api.fileUrl(media.id)))}
        />
      </button>
      {open && <ImageViewer media={media} onClose={() => setOpen(false)} />}
    </>
  );
}

/** The original at full size, in a modal dialog: Escape or "Close" closes it. */
function ImageViewer({ media, onClose }: { media: Media; onClose: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  return (
    <dialog ref={dialog} className="image-viewer" aria-label={media.filename} onClose={onClose}>
      <img src={api.fileUrl(media.id)} alt={media.filename} data-testid="full-image" />
      <div className="image-viewer-bar">
        <span className="file-name">{media.filename}</span>
        <a href={api.fileUrl(media.id)} download={media.filename}>
          Download
        </a>
        <button type="button" onClick={() => dialog.current?.close()} autoFocus>
          Close
        </button>
      </div>
    </dialog>
  );
}
