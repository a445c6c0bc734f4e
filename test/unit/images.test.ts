/**
 * functions/platform/images.ts: thumbnails (§8.4) and the "bytes must decode as an image" check
 * (§5.6.2 check 14). Every fixture is made here with sharp, so each test states its image.
 * This runs sharp's native build (the machine's); test/infra/image-bundle.test.ts runs the same
 * module from the Lambda asset, on the wasm build.
 */
import { crc32, deflateSync } from 'node:zlib';
import sharp from 'sharp';
import type { Sharp } from 'sharp';
import {
  MAX_INPUT_PIXELS,
  NotAnImageError,
  imageRuntime,
  makeThumbnail,
  sniffImageType,
} from '../../functions/platform/images.js';

type Rgb = readonly [number, number, number];

/** Raw RGB pixels, `paint(x, y)` each; `frames` stacks pages for an animation. */
function pixels(width: number, height: number, paint: (x: number, y: number, frame: number) => Rgb, frames = 1) {
  const data = Buffer.alloc(width * height * frames * 3);
  for (let f = 0; f < frames; f++)
    for (let y = 0; y < height; y++)
      for (let x = 0; x < width; x++) data.set(paint(x, y, f), ((f * height + y) * width + x) * 3);
  return sharp(data, {
    raw: { width, height: height * frames, channels: 3, ...(frames > 1 ? { pageHeight: height } : {}) },
  });
}

/** A photo-sized test card, filled without a call per pixel. */
function gradient(width: number, height: number) {
  const data = Buffer.alloc(width * height * 3);
  for (let y = 0, i = 0; y < height; y++) {
    const green = ((y * 255) / height) | 0;
    for (let x = 0; x < width; x++, i += 3) {
      data[i] = ((x * 255) / width) | 0;
      data[i + 1] = green;
      data[i + 2] = (x ^ y) & 0xff;
    }
  }
  return sharp(data, { raw: { width, height, channels: 3 } });
}

const RED: Rgb = [255, 0, 0];
const BLUE: Rgb = [0, 0, 255];
const GREEN: Rgb = [0, 255, 0];

/** The WebP decoded again: what a client would see. */
async function decodeWebp(webp: Buffer) {
  const metadata = await sharp(webp).metadata();
  const { data, info } = await sharp(webp).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const at = (x: number, y: number): Rgb => {
    const i = (y * info.width + x) * 3;
    return [data[i]!, data[i + 1]!, data[i + 2]!];
  };
  return { metadata, at };
}

/** Each channel within `tolerance` of the expected colour (lossy codecs). */
const near = (actual: Rgb, expected: Rgb, tolerance = 40) =>
  actual.every((value, i) => Math.abs(value - expected[i]!) <= tolerance);

/** PNG chunks, to corrupt one while keeping the file well-formed around it. */
function pngChunks(png: Buffer): { type: string; data: Buffer }[] {
  const chunks = [];
  for (let at = 8; at < png.length;) {
    const length = png.readUInt32BE(at);
    chunks.push({ type: png.toString('latin1', at + 4, at + 8), data: png.subarray(at + 8, at + 8 + length) });
    at += 12 + length;
  }
  return chunks;
}

function pngFrom(chunks: { type: string; data: Buffer }[]): Buffer {
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([
    signature,
    ...chunks.map(({ type, data }) => {
      const head = Buffer.alloc(8);
      head.writeUInt32BE(data.length, 0);
      head.write(type, 4, 'latin1');
      const crc = Buffer.alloc(4);
      crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
      return Buffer.concat([head, data, crc]);
    }),
  ]);
}

/** Replaces one chunk's data (the CRC is recomputed, so only the content is wrong). */
const withChunk = (png: Buffer, type: string, data: (old: Buffer) => Buffer) =>
  pngFrom(pngChunks(png).map((chunk) => (chunk.type === type ? { type, data: data(chunk.data) } : chunk)));

async function refusal(bytes: Uint8Array): Promise<NotAnImageError> {
  const error = await makeThumbnail(bytes).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(NotAnImageError);
  return error as NotAnImageError;
}

const text = (s: string) => Buffer.from(s, 'utf8');

describe('makeThumbnail', () => {
  it('runs on the native build here (the Lambda asset runs the wasm build, see test/infra)', async () => {
    expect(await imageRuntime()).toEqual({ sharp: expect.any(String), libvips: expect.any(String), build: 'native' });
  });

  it('fits a 4000x3000 JPEG inside 512x512: 512x384 WebP', async () => {
    const jpeg = await gradient(4000, 3000).jpeg({ quality: 90 }).toBuffer();
    const started = performance.now();
    const thumbnail = await makeThumbnail(jpeg);
    const elapsed = performance.now() - started;
    expect([thumbnail.width, thumbnail.height, thumbnail.sourceType]).toEqual([512, 384, 'image/jpeg']);
    const { metadata } = await decodeWebp(thumbnail.webp);
    expect([metadata.format, metadata.width, metadata.height]).toEqual(['webp', 512, 384]);
    expect(elapsed).toBeLessThan(5_000); // about 40 ms native, 80 ms wasm on this machine
  });

  it('keeps a portrait aspect ratio: 1000x3000 PNG becomes 171x512', async () => {
    const png = await gradient(1000, 3000).png().toBuffer();
    const thumbnail = await makeThumbnail(png);
    expect([thumbnail.width, thumbnail.height, thumbnail.sourceType]).toEqual([171, 512, 'image/png']);
  });

  it('never enlarges: a 100x50 PNG stays 100x50, colours intact', async () => {
    const png = await pixels(100, 50, (x) => (x < 50 ? RED : BLUE))
      .png()
      .toBuffer();
    const thumbnail = await makeThumbnail(png);
    expect([thumbnail.width, thumbnail.height, thumbnail.sourceType]).toEqual([100, 50, 'image/png']);
    const { metadata, at } = await decodeWebp(thumbnail.webp);
    expect([metadata.format, metadata.width, metadata.height]).toEqual(['webp', 100, 50]);
    expect([near(at(10, 25), RED), near(at(90, 25), BLUE)]).toEqual([true, true]);
  });

  it('reads a PNG with an alpha channel', async () => {
    const rgba = await sharp({
      create: { width: 64, height: 32, channels: 4, background: { r: 0, g: 255, b: 0, alpha: 0.5 } },
    })
      .png()
      .toBuffer();
    const thumbnail = await makeThumbnail(rgba);
    expect([thumbnail.width, thumbnail.height]).toEqual([64, 32]);
    expect((await sharp(thumbnail.webp).metadata()).hasAlpha).toBe(true);
  });

  it.each([
    ['WebP', 'image/webp', (image: Sharp) => image.webp()],
    ['GIF', 'image/gif', (image: Sharp) => image.gif()],
    ['AVIF', 'image/avif', (image: Sharp) => image.avif({ effort: 0 })],
    ['TIFF', 'image/tiff', (image: Sharp) => image.tiff()],
  ])('thumbnails a %s: 1024x256 becomes 512x128', async (_name, type, encode) => {
    const bytes = await encode(gradient(1024, 256)).toBuffer();
    expect(sniffImageType(bytes)).toBe(type);
    const thumbnail = await makeThumbnail(bytes);
    expect([thumbnail.width, thumbnail.height, thumbnail.sourceType]).toEqual([512, 128, type]);
    const { metadata } = await decodeWebp(thumbnail.webp);
    expect([metadata.format, metadata.width, metadata.height]).toEqual(['webp', 512, 128]);
  });

  it.each([
    ['GIF', (image: Sharp) => image.gif()],
    ['WebP', (image: Sharp) => image.webp({ lossless: true })],
  ])('makes an animated %s a still of its first frame', async (_name, encode) => {
    const frames = [RED, GREEN, BLUE] as const;
    const animation = await encode(pixels(40, 30, (_x, _y, frame) => frames[frame]!, 3)).toBuffer();
    expect((await sharp(animation).metadata()).pages).toBe(3);
    const thumbnail = await makeThumbnail(animation);
    expect([thumbnail.width, thumbnail.height]).toEqual([40, 30]);
    const { metadata, at } = await decodeWebp(thumbnail.webp);
    expect([metadata.width, metadata.height, metadata.pages ?? 1]).toEqual([40, 30, 1]);
    expect(near(at(20, 15), RED)).toBe(true);
  });

  it('applies the EXIF orientation (6: turn 90° clockwise) and drops the EXIF', async () => {
    // Stored landscape: left half red, right half blue. Shown upright it is portrait, red on top.
    const jpeg = await pixels(200, 100, (x) => (x < 100 ? RED : BLUE))
      .jpeg({ quality: 95 })
      .withMetadata({ orientation: 6 })
      .toBuffer();
    expect((await sharp(jpeg).metadata()).orientation).toBe(6);
    const thumbnail = await makeThumbnail(jpeg);
    expect([thumbnail.width, thumbnail.height]).toEqual([100, 200]);
    const { metadata, at } = await decodeWebp(thumbnail.webp);
    expect([metadata.width, metadata.height, metadata.orientation]).toEqual([100, 200, undefined]);
    expect([near(at(50, 20), RED), near(at(50, 180), BLUE)]).toEqual([true, true]);
  });

  it('applies the EXIF orientation before fitting: a 4000x3000 JPEG shown upright gives 384x512', async () => {
    const jpeg = await gradient(4000, 3000).jpeg().withMetadata({ orientation: 8 }).toBuffer();
    const thumbnail = await makeThumbnail(jpeg);
    expect([thumbnail.width, thumbnail.height]).toEqual([384, 512]);
  });

  it('accepts bytes as a plain Uint8Array', async () => {
    const png = await gradient(20, 10).png().toBuffer();
    const thumbnail = await makeThumbnail(new Uint8Array(png));
    expect([thumbnail.width, thumbnail.height]).toEqual([20, 10]);
  });
});

describe('makeThumbnail refuses what is not a whole image (NotAnImageError → 415)', () => {
  let png: Buffer;
  let jpeg: Buffer;
  beforeAll(async () => {
    png = await gradient(300, 200).png().toBuffer();
    jpeg = await gradient(300, 200).jpeg().toBuffer();
  });

  it('empty bytes', async () => {
    await refusal(new Uint8Array());
  });

  it.each([
    ['an SVG', '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>'],
    [
      'an SVG with an XML declaration',
      '<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="9" height="9"/>',
    ],
    [
      'an SVG after a byte order mark and spaces',
      '\ufeff  \n<svg xmlns="http://www.w3.org/2000/svg" width="9" height="9"/>',
    ],
    ['an HTML page', '<!doctype html><html><body><img src=x onerror=alert(1)></body></html>'],
    ['a PDF', '%PDF-1.7\n1 0 obj\n<<>>\nendobj\n'],
    ['plain text', 'just some words'],
  ])('%s', async (_name, body) => {
    expect(sniffImageType(text(body))).toBeUndefined();
    await refusal(text(body));
  });

  it('an SVG that the decoder itself would read (SVG is never decoded here)', async () => {
    const svg = text(
      '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><rect width="64" height="64" fill="red"/></svg>',
    );
    expect((await sharp(svg).metadata()).format).toBe('svg'); // libvips would take it
    await refusal(svg);
  });

  it('HTML behind a PNG signature (polyglot)', async () => {
    const polyglot = Buffer.concat([png.subarray(0, 8), text('<html><script>alert(1)</script></html>')]);
    expect(sniffImageType(polyglot)).toBe('image/png');
    await refusal(polyglot);
  });

  it.each([
    ['JPEG', [0xff, 0xd8, 0xff, 0xe0]],
    ['GIF', [...text('GIF89a')]],
    ['WebP', [...text('RIFF'), 0, 0, 0, 0, ...text('WEBP')]],
    ['TIFF', [0x49, 0x49, 0x2a, 0x00]],
  ])('HTML behind a %s signature (polyglot)', async (_name, magic) => {
    const polyglot = Buffer.concat([Buffer.from(magic), text('<html><body>not an image</body></html>')]);
    expect(sniffImageType(polyglot)).toBeDefined();
    await refusal(polyglot);
  });

  it('an SVG behind a PNG signature', async () => {
    await refusal(Buffer.concat([png.subarray(0, 8), text('<svg xmlns="http://www.w3.org/2000/svg"/>')]));
  });

  it.each([0.5, 0.9])('a PNG truncated to %s of its length', async (fraction) => {
    await refusal(png.subarray(0, Math.floor(png.length * fraction)));
  });

  it.each([0.5, 0.9])('a JPEG truncated to %s of its length', async (fraction) => {
    await refusal(jpeg.subarray(0, Math.floor(jpeg.length * fraction)));
  });

  it('a PNG whose pixel data is random bytes (chunks and CRCs well-formed)', async () => {
    const garbage = withChunk(png, 'IDAT', (old) => Buffer.from(old.map((_, i) => (i * 7919 + 13) & 0xff)));
    await refusal(garbage);
  });

  it('a PNG whose pixel data inflates to garbage (bad row filters)', async () => {
    const rows = Buffer.alloc(200 * (1 + 300 * 3), 0xee); // every row's filter byte is 0xee
    await refusal(withChunk(png, 'IDAT', () => deflateSync(rows)));
  });

  it('a PNG whose pixel data is too short for its size', async () => {
    await refusal(withChunk(png, 'IDAT', () => deflateSync(Buffer.alloc(10 * (1 + 300 * 3)))));
  });

  it('a PNG with a corrupted pixel chunk CRC', async () => {
    const corrupt = Buffer.from(png);
    const idat = corrupt.indexOf('IDAT', 8, 'latin1');
    corrupt[idat + 20] = corrupt[idat + 20]! ^ 0xff;
    await refusal(corrupt);
  });

  it('a JPEG whose entropy-coded data is overwritten', async () => {
    const corrupt = Buffer.from(jpeg);
    const scan = corrupt.indexOf(Buffer.from([0xff, 0xda])); // start of scan
    corrupt.fill(0xff, scan + 40, corrupt.length - 2);
    await refusal(corrupt);
  });

  it('a decompression bomb: a PNG that claims 12000x10000 pixels', async () => {
    const bomb = withChunk(png, 'IHDR', (old) => {
      const header = Buffer.from(old);
      header.writeUInt32BE(12_000, 0);
      header.writeUInt32BE(10_000, 4);
      return header;
    });
    expect(12_000 * 10_000).toBeGreaterThan(MAX_INPUT_PIXELS);
    expect((await refusal(bomb)).message).toMatch(/pixel/i);
  });

  it('a HEIC (HEVC) file: the prebuilt libvips cannot decode HEVC', async () => {
    const heic = Buffer.concat([Buffer.from([0, 0, 0, 24]), text('ftypheic'), Buffer.alloc(4), text('mif1heic')]);
    expect(sniffImageType(heic)).toBeUndefined();
    await refusal(heic);
  });
});

describe('sniffImageType (magic bytes only)', () => {
  const bytes = (...parts: (string | number[])[]) =>
    new Uint8Array(Buffer.concat(parts.map((part) => (typeof part === 'string' ? text(part) : Buffer.from(part)))));

  it.each([
    ['image/jpeg', bytes([0xff, 0xd8, 0xff, 0xdb], 'rest')],
    ['image/png', bytes([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13])],
    ['image/gif', bytes('GIF87a', [1, 0, 1, 0])],
    ['image/gif', bytes('GIF89a', [1, 0, 1, 0])],
    ['image/webp', bytes('RIFF', [0x24, 0, 0, 0], 'WEBPVP8 ')],
    ['image/avif', bytes([0, 0, 0, 0x1c], 'ftypavif', [0, 0, 0, 0], 'avifmif1miaf')],
    ['image/avif', bytes([0, 0, 0, 0x20], 'ftypmif1', [0, 0, 0, 0], 'mif1miafMA1Bavif')],
    ['image/avif', bytes([0, 0, 0, 0x18], 'ftypavis', [0, 0, 0, 0], 'avis')],
    ['image/tiff', bytes([0x49, 0x49, 0x2a, 0x00, 8, 0, 0, 0])],
    ['image/tiff', bytes([0x4d, 0x4d, 0x00, 0x2a, 0, 0, 0, 8])],
    ['image/tiff', bytes([0x49, 0x49, 0x2b, 0x00, 8, 0, 0, 0])],
  ])('%s', (type, input) => {
    expect(sniffImageType(input)).toBe(type);
  });

  it.each([
    ['empty', bytes()],
    ['a JPEG signature cut short', bytes([0xff, 0xd8])],
    ['a PNG signature cut short', bytes([0x89, 0x50, 0x4e, 0x47])],
    ['GIF without a version', bytes('GIF8')],
    ['a RIFF that is not WebP (WAV)', bytes('RIFF', [0x24, 0, 0, 0], 'WAVEfmt ')],
    ['an MP4', bytes([0, 0, 0, 0x18], 'ftypisom', [0, 0, 2, 0], 'isomiso2')],
    ['a HEIC', bytes([0, 0, 0, 0x18], 'ftypheic', [0, 0, 0, 0], 'mif1heic')],
    ['an AVIF brand outside the ftyp box', bytes([0, 0, 0, 0x10], 'ftypisom', [0, 0, 0, 0], 'avif')],
    ['SVG', bytes('<svg xmlns="http://www.w3.org/2000/svg"/>')],
    ['XML', bytes('<?xml version="1.0"?><svg/>')],
    ['HTML', bytes('<!DOCTYPE html><html></html>')],
    ['a BMP (not decoded by libvips)', bytes('BM', [0x36, 0, 0, 0, 0, 0, 0, 0])],
    ['an ICO', bytes([0, 0, 1, 0, 1, 0])],
    ['a PDF', bytes('%PDF-1.4')],
    ['a PNG signature that starts one byte late', bytes([0, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])],
  ])('%s: not an image', (_name, input) => {
    expect(sniffImageType(input)).toBeUndefined();
  });
});
