/**
 * Image checks and thumbnails for media uploads (contract §5.6.2 check 14, §8.2, §8.4), on
 * sharp (libvips).
 *
 * Where sharp's binary comes from:
 * - jest and the local runtime (linux x64, macOS…): sharp's own native prebuilt, which npm
 *   installs as an optional dependency for the machine it runs on;
 * - Lambda (arm64): sharp's WebAssembly build, @img/sharp-wasm32 (a plain dependency with no
 *   os/cpu fields, so `npm ci` on any machine installs it). npm cannot install the linux-arm64
 *   prebuilt beside the x64 one, and bundling runs offline without Docker, so a function that
 *   imports this module is built with `images: true` (lib/constructs/api-function.ts): sharp
 *   stays outside the esbuild bundle and its runtime files, the wasm build included and no
 *   native binary, are copied into the asset. On Lambda sharp looks for
 *   @img/sharp-linux-arm64, does not find it, and loads the wasm build: same sharp, same
 *   libvips version, same options.
 *
 * sharp is loaded on the first call, so importing this module costs nothing until an image is
 * seen: the media functions import in 34-41 ms (a fresh Node 22 here), and a request that is not
 * an image (a PDF, a 4xx) never loads it. The first image of an instance pays the load (wasm
 * build: ~75 ms to compile the module, ~95 ms more for the first operation's code, measured
 * here); loading it in INIT instead saved nothing for that request (warm-up 183 ms + first
 * thumbnail 92 ms against 282 ms cold, test/infra/image-bundle.test.ts) and charged it to every
 * cold start, so it is not done.
 */
import type sharpDefault from 'sharp';

type Sharp = typeof sharpDefault;

/** The image types makeThumbnail decodes (what sniffImageType can answer). */
export type ImageType = 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp' | 'image/avif' | 'image/tiff';

/** Thumbnails fit inside this square (§8.4). */
export const THUMBNAIL_MAX_SIZE = 512;
/** WebP quality of thumbnails (§8.4). */
export const THUMBNAIL_QUALITY = 80;
/** Images with more pixels than this (width × height, first frame) are refused unread. */
export const MAX_INPUT_PIXELS = 100_000_000;

/** The bytes are not an image this module decodes: the upload answers 415 (§5.6.2 check 14). */
export class NotAnImageError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'NotAnImageError';
  }
}

export interface Thumbnail {
  webp: Buffer;
  width: number;
  height: number;
  sourceType: ImageType;
}

const ascii = (bytes: Uint8Array, start: number, text: string): boolean => {
  if (bytes.length < start + text.length) return false;
  for (let i = 0; i < text.length; i++) if (bytes[start + i] !== text.charCodeAt(i)) return false;
  return true;
};

const startsWith = (bytes: Uint8Array, prefix: readonly number[]): boolean =>
  bytes.length >= prefix.length && prefix.every((byte, i) => bytes[i] === byte);

/** An ISO-BMFF `ftyp` box whose major or a compatible brand is AVIF (HEIC/HEVC is not decoded). */
function isAvif(bytes: Uint8Array): boolean {
  if (bytes.length < 16 || !ascii(bytes, 4, 'ftyp')) return false;
  const boxSize = ((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0;
  const end = Math.min(boxSize, bytes.length);
  const isAvifBrand = (at: number) => ascii(bytes, at, 'avif') || ascii(bytes, at, 'avis');
  if (isAvifBrand(8)) return true;
  for (let at = 16; at + 4 <= end; at += 4) if (isAvifBrand(at)) return true;
  return false;
}

/**
 * The image type the bytes claim by their magic numbers, or undefined. Only the content is
 * read, never a name or a declared type. SVG, XML and HTML are never an image here.
 */
export function sniffImageType(bytes: Uint8Array): ImageType | undefined {
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (ascii(bytes, 0, 'GIF87a') || ascii(bytes, 0, 'GIF89a')) return 'image/gif';
  if (ascii(bytes, 0, 'RIFF') && ascii(bytes, 8, 'WEBP')) return 'image/webp';
  if (isAvif(bytes)) return 'image/avif';
  // Classic TIFF ("II*\0", "MM\0*") and BigTIFF ("II+\0", "MM\0+").
  if (startsWith(bytes, [0x49, 0x49, 0x2a, 0x00]) || startsWith(bytes, [0x4d, 0x4d, 0x00, 0x2a])) return 'image/tiff';
  if (startsWith(bytes, [0x49, 0x49, 0x2b, 0x00]) || startsWith(bytes, [0x4d, 0x4d, 0x00, 0x2b])) return 'image/tiff';
  return undefined;
}

/** What libvips must report having decoded for each sniffed type (its loader, not ours, decides). */
function decodedAs(format: string | undefined, compression: string | undefined): ImageType | undefined {
  switch (format) {
    case 'jpeg':
      return 'image/jpeg';
    case 'png':
      return 'image/png';
    case 'gif':
      return 'image/gif';
    case 'webp':
      return 'image/webp';
    case 'tiff':
      return 'image/tiff';
    case 'heif':
      return compression === 'av1' ? 'image/avif' : undefined;
    default:
      return undefined;
  }
}

let loading: Promise<Sharp> | undefined;

function loadSharp(): Promise<Sharp> {
  loading ??= import('sharp').then(
    ({ default: sharp }) => {
      // Each thumbnail reads a new image once: libvips' operation cache would only hold memory.
      sharp.cache(false);
      return sharp;
    },
    (error: unknown) => {
      loading = undefined; // a later call tries again; this one fails as a server error
      throw error;
    },
  );
  return loading;
}

/** Which sharp build this process runs ('wasm' on Lambda, 'native' locally), for logs and tests. */
export async function imageRuntime(): Promise<{ sharp: string; libvips: string; build: 'native' | 'wasm' }> {
  const sharp = await loadSharp();
  const versions = sharp.versions as Record<string, string | undefined>;
  return {
    sharp: versions.sharp ?? 'unknown',
    libvips: versions.vips ?? 'unknown',
    build: versions.emscripten === undefined ? 'native' : 'wasm',
  };
}

/**
 * Decodes the image fully (first frame of an animation), applies its EXIF orientation, fits it
 * inside 512×512 without enlarging and encodes it as WebP at quality 80 (§8.4).
 *
 * Throws NotAnImageError when the bytes are not a whole, valid image of a supported type:
 * unknown magic (SVG, HTML, PDF, empty…), a polyglot whose body is not the image its magic
 * claims, truncated or corrupt data, or more than MAX_INPUT_PIXELS pixels. Any other error
 * (sharp failing to load, the wasm runtime aborting) is a server fault and is thrown as is.
 */
export async function makeThumbnail(bytes: Uint8Array): Promise<Thumbnail> {
  const sourceType = sniffImageType(bytes);
  if (!sourceType) throw new NotAnImageError('The bytes are not a supported image (unknown signature).');

  const sharp = await loadSharp();
  try {
    const image = sharp(bytes, {
      // sharp's default, and its advice for untrusted input: abort on any decoder warning, so
      // damaged data that a decoder would patch over (grey blocks) is refused too. A few
      // cameras' JPEGs with stray bytes fail with it, as they do on the reference.
      failOn: 'warning',
      limitInputPixels: MAX_INPUT_PIXELS,
      autoOrient: true,
      pages: 1,
    });
    const metadata = await image.metadata();
    if (decodedAs(metadata.format, metadata.compression) !== sourceType) {
      throw new NotAnImageError(`The bytes look like ${sourceType} but decode as ${metadata.format ?? 'nothing'}.`);
    }
    const pixels = (metadata.width ?? 0) * (metadata.pageHeight ?? metadata.height ?? 0);
    if (pixels > MAX_INPUT_PIXELS) {
      throw new NotAnImageError(`The image has ${pixels} pixels, more than the limit of ${MAX_INPUT_PIXELS}.`);
    }
    const { data, info } = await image
      .resize({ width: THUMBNAIL_MAX_SIZE, height: THUMBNAIL_MAX_SIZE, fit: 'inside', withoutEnlargement: true })
      .webp({ quality: THUMBNAIL_QUALITY })
      .toBuffer({ resolveWithObject: true });
    return { webp: data, width: info.width, height: info.height, sourceType };
  } catch (error) {
    // WebAssembly.RuntimeError (the wasm build aborting, e.g. out of memory) is our fault.
    if (error instanceof NotAnImageError || (error instanceof Error && error.name === 'RuntimeError')) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new NotAnImageError(`The bytes do not decode as ${sourceType}: ${reason}`, { cause: error });
  }
}
