/**
 * A message's media: image thumbnails (a click opens the original in a dialog), inline audio,
 * and download chips with name, size and type for everything else.
 */
import { useEffect, useRef, useState } from 'react';
import { api } from '../api/client';
import type { Media } from '../api/types';
import { formatBytes } from '../shared/bytes';

export { formatBytes };

const known = new Map<string, Promise<Media | undefined>>();
const metadata = (id: string) => {
  let entry = known.get(id);
  if (!entry) {
    entry = api.media(id).catch(() => {
      known.delete(id);
      return undefined;
    });
    known.set(id, entry);
  }
  return entry;
};

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
  const [media, setMedia] = useState<Media | undefined | null>(null);
  useEffect(() => {
    let live = true;
    void metadata(id).then((m) => live && setMedia(m));
    return () => {
      live = false;
    };
  }, [id]);
  if (media === null) return <span className="file-chip">…</span>;
  if (media === undefined) return <span className="file-chip">Attachment unavailable</span>;
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
