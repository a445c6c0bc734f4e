/**
 * `npm run icons:web`: the web app's PNG icons (web/public/icons/), made once from
 * web/public/favicon.svg with sharp and committed; run again only when the favicon changes.
 * - icon-192.png, icon-512.png: the favicon as drawn (its rounded corners transparent), purpose "any";
 * - icon-maskable-512.png: full bleed, the favicon's blue behind it and the favicon at 80 % (its glyph then spans half the icon), so
 *   the glyph stays inside the 80 % safe zone whatever shape the launcher cuts (purpose "maskable");
 * - apple-touch-icon.png (180): full bleed, opaque (iOS fills transparency with black and rounds
 *   the corners itself).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';

const PUBLIC = fileURLToPath(new URL('../web/public/', import.meta.url));
const OUT = join(PUBLIC, 'icons');
const svg = readFileSync(join(PUBLIC, 'favicon.svg'));
/** The favicon's background (its rounded square), which fills the full-bleed icons. */
const fill = /<rect[^>]*fill="(#[0-9a-fA-F]{6})"/.exec(svg.toString('utf8'))?.[1];
if (!fill) throw new Error('favicon.svg: no filled <rect> found for the background colour');

const drawn = (size: number) =>
  sharp(svg, { density: (72 * size) / 64 })
    .resize(size, size)
    .png();

async function fullBleed(size: number, glyphShare: number, file: string): Promise<void> {
  const glyph = Math.round(size * glyphShare);
  const inner = await drawn(glyph).toBuffer();
  await sharp({ create: { width: size, height: size, channels: 4, background: fill! } })
    .composite([{ input: inner, gravity: 'center' }])
    .flatten({ background: fill! })
    .png({ compressionLevel: 9 })
    .toFile(join(OUT, file));
}

mkdirSync(OUT, { recursive: true });
for (const size of [192, 512])
  await drawn(size)
    .png({ compressionLevel: 9 })
    .toFile(join(OUT, `icon-${size}.png`));
await fullBleed(512, 0.8, 'icon-maskable-512.png');
await fullBleed(180, 1, 'apple-touch-icon.png');
console.log(`icons written to ${OUT}`);
