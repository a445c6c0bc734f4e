/** A message's media: image thumbnails (full size on click), inline audio, and file chips. */
import { useEffect, useState } from 'react';
import { api } from '../api/client';
import type { Media } from '../api/types';

const known = new Map<string, Promise<Media | undefined>>();
const metadata = (id: string) => {
  let entry = known.get(id);
  if (!entry) {
    entry = api.media(id).catch(() => undefined);
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
  if (media.kind === 'image') {
    return (
      <a href={api.fileUrl(id)} target="_blank" rel="noopener noreferrer" className="image-link">
        <img src={api.thumbnailUrl(id)} alt={media.filename} loading="lazy" />
      </a>
    );
  }
  if (media.kind === 'audio') {
    return <audio controls preload="none" src={api.fileUrl(id)} aria-label={media.filename} />;
  }
  return (
    <a className="file-chip" href={api.fileUrl(id)} download={media.filename}>
      <span className="file-name">{media.filename}</span>
      <span className="file-size">
        {formatBytes(media.byte_size)} · {media.content_type}
      </span>
    </a>
  );
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
