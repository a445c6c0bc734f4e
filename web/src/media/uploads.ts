/**
 * File uploads with progress, part of the API client (client.ts makes the JSON calls; fetch gives
 * no upload progress, XMLHttpRequest does). A file up to `directUploadMaxBytes` goes in one
 * multipart request (POST /chats/{chatId}/media); a larger one, up to `maxUploadBytes`, through an
 * upload session (docs/architecture.md "Large files"): open it, POST the form to the URL it gives (on this
 * page's own origin, which hands it to the media bucket: the CSP allows no other), then finalize.
 */
import { API, ApiError, api, checkStillSignedIn } from '../api/client';
import type { Media, PublicConfig } from '../api/types';

/** What one request carries when the service does not say (docs/architecture.md "Media": 4 MiB). */
const DEFAULT_DIRECT_MAX_BYTES = 4_194_304;

export interface UploadOptions {
  /** Declared kind (a voice note is `audio`); otherwise the service decides by content type. */
  kind?: Media['kind'];
  /** Bytes sent so far of `total` (the request body, so a little more than the file). */
  onProgress: (sent: number, total: number) => void;
  /** Becomes true once the bytes are stored and the service is checking and recording them. */
  onFinishing?: () => void;
  signal: AbortSignal;
}

/** The content type a file is declared with: the browser's guess, else opaque bytes. */
export const contentTypeOf = (file: File): string => file.type || 'application/octet-stream';

/** Uploads one file by the path its size needs; resolves with the stored medium. */
export async function uploadFile(
  config: PublicConfig,
  chatId: string,
  file: File,
  options: UploadOptions,
): Promise<Media> {
  const directMax = config.directUploadMaxBytes ?? DEFAULT_DIRECT_MAX_BYTES;
  if (file.size <= directMax) {
    const form = new FormData();
    if (options.kind) form.append('kind', options.kind);
    form.append('file', file, file.name);
    const answer = await postForm(`${API}/chats/${encodeURIComponent(chatId)}/media`, form, options, true);
    return answer as Media;
  }
  const session = await api.openUploadSession(chatId, {
    fileName: file.name,
    contentType: contentTypeOf(file),
    byteSize: file.size,
    ...(options.kind ? { kind: options.kind } : {}),
  });
  const form = new FormData();
  for (const [name, value] of Object.entries(session.fields)) form.append(name, value);
  form.append('file', file, file.name);
  await postForm(session.url, form, options, false);
  options.signal.throwIfAborted();
  options.onFinishing?.();
  return api.finalizeUpload(chatId, session.uploadId);
}

/**
 * POSTs a form with upload progress. `fromApi`: the answer is the API's (JSON, its error envelope,
 * 401 ends the session); otherwise storage's (S3: 204, or an XML error).
 */
function postForm(url: string, form: FormData, options: UploadOptions, fromApi: boolean): Promise<unknown> {
  return new Promise((resolve, reject) => {
    if (options.signal.aborted) return reject(new DOMException('The upload was cancelled.', 'AbortError'));
    const xhr = new XMLHttpRequest();
    const abort = () => xhr.abort();
    options.signal.addEventListener('abort', abort, { once: true });
    const done = () => options.signal.removeEventListener('abort', abort);
    xhr.open('POST', url);
    if (fromApi) xhr.setRequestHeader('accept', 'application/json');
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable) options.onProgress(event.loaded, event.total);
    };
    xhr.onload = () => {
      done();
      if (xhr.status >= 200 && xhr.status < 300) {
        if (xhr.status === 204 || !fromApi) return resolve(undefined);
        return resolve(parse(xhr.responseText));
      }
      if (fromApi && xhr.status === 401) void checkStillSignedIn();
      reject(fromApi ? apiErrorOf(xhr) : storageErrorOf(xhr));
    };
    xhr.onerror = () => {
      done();
      reject(new ApiError(0, 'NETWORK_ERROR', 'The upload could not reach the service.'));
    };
    xhr.onabort = () => {
      done();
      reject(new DOMException('The upload was cancelled.', 'AbortError'));
    };
    xhr.send(form);
  });
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function apiErrorOf(xhr: XMLHttpRequest): ApiError {
  const envelope = (parse(xhr.responseText) as { error?: { code: string; message: string; details: null } })?.error;
  return new ApiError(
    xhr.status,
    envelope?.code ?? 'HTTP_ERROR',
    envelope?.message ?? `The service answered ${xhr.status}.`,
    envelope?.details ?? null,
  );
}

/** Storage answers in S3's XML; its code says enough (EntityTooLarge, AccessDenied: an expired form). */
function storageErrorOf(xhr: XMLHttpRequest): ApiError {
  const code = /<Code>([^<]*)<\/Code>/.exec(xhr.responseText)?.[1] ?? `HTTP_${xhr.status}`;
  return new ApiError(xhr.status, code, `Storage refused the file (${code}).`);
}

/**
 * Why the service would refuse this file, when the page can tell before sending it (contract §5.6.2
 * checks 10–13, §8.1): empty, over `maxUploadBytes`, SVG, or a type `allowedMimeTypes` excludes.
 */
export function refusalOf(config: PublicConfig, file: File, formatBytes: (n: number) => string): string | undefined {
  if (file.size === 0) return 'the file is empty';
  if (file.size > config.maxUploadBytes) return `it is larger than the ${formatBytes(config.maxUploadBytes)} limit`;
  const type = contentTypeOf(file).split(';')[0]!.trim().toLowerCase();
  if (type === 'image/svg+xml') return 'SVG files are not allowed';
  const allowed = config.allowedMimeTypes.map((t) => t.split(';')[0]!.trim().toLowerCase());
  const ok =
    allowed.includes('*/*') ||
    allowed.includes(type) ||
    allowed.some((t) => t.endsWith('/*') && type.startsWith(t.slice(0, -1)));
  return ok ? undefined : `files of type ${type} are not allowed`;
}
