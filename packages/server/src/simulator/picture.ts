import { createHash } from 'node:crypto';

export type Rgb = readonly [red: number, green: number, blue: number];
export type Yuv = readonly [luma: number, blueChroma: number, redChroma: number];

/**
 * What a picture looks like, derived from SHA-256 of the prompt alone: three colours, a stripe
 * width and a stripe direction. Same prompt, same palette; another prompt almost surely another.
 */
export interface Palette {
  readonly first: Rgb;
  readonly second: Rgb;
  readonly accent: Rgb;
  /** Stripe width as a fraction of the shorter side, from 1/16 to 1/4. */
  readonly stripeFraction: number;
  /** +1: stripes fall to the right; -1: to the left. */
  readonly slope: 1 | -1;
}

export function paletteOf(prompt: string): Palette {
  const digest = createHash('sha256').update(prompt, 'utf8').digest();
  const colour = (offset: number): Rgb => [
    digest[offset] ?? 0,
    digest[offset + 1] ?? 0,
    digest[offset + 2] ?? 0,
  ];
  return {
    first: colour(0),
    second: colour(3),
    accent: colour(6),
    stripeFraction: 1 / (4 + ((digest[9] ?? 0) % 13)),
    slope: (digest[10] ?? 0) & 1 ? 1 : -1,
  };
}

/** BT.601 limited-range YUV of an RGB colour (what H.264 encoders expect). */
export function toYuv([red, green, blue]: Rgb): Yuv {
  const clamp = (value: number) => Math.max(0, Math.min(255, Math.round(value)));
  return [
    clamp(16 + (65.481 * red + 128.553 * green + 24.966 * blue) / 255),
    clamp(128 + (-37.797 * red - 74.203 * green + 112 * blue) / 255),
    clamp(128 + (112 * red - 93.786 * green - 18.214 * blue) / 255),
  ];
}

/**
 * The RGB rows of a `width` × `height` picture: diagonal stripes of the palette's two colours
 * with an accent square in the middle. Each row is copied from one precomputed strip shifted by
 * the row number, so drawing costs a copy per row, not arithmetic per pixel. Layout: PNG's raw
 * scanlines, each preceded by its filter byte (0, none).
 */
export function drawScanlines(palette: Palette, width: number, height: number): Buffer {
  const stripe = Math.max(2, Math.round(Math.min(width, height) * palette.stripeFraction));
  const period = stripe * 2;
  const strip = Buffer.alloc((width + period) * 3);
  for (let x = 0; x < width + period; x += 1) {
    const [red, green, blue] = Math.floor(x / stripe) % 2 === 0 ? palette.first : palette.second;
    strip[x * 3] = red;
    strip[x * 3 + 1] = green;
    strip[x * 3 + 2] = blue;
  }
  const side = Math.floor(Math.min(width, height) / 3);
  const left = Math.floor((width - side) / 2);
  const top = Math.floor((height - side) / 2);
  const accent = Buffer.alloc(side * 3);
  for (let x = 0; x < side; x += 1) accent.set(palette.accent, x * 3);
  const rowBytes = 1 + width * 3;
  const scanlines = Buffer.alloc(rowBytes * height);
  for (let y = 0; y < height; y += 1) {
    const shift = (((palette.slope * y) % period) + period) % period;
    strip.copy(scanlines, y * rowBytes + 1, shift * 3, (shift + width) * 3);
    if (y >= top && y < top + side) accent.copy(scanlines, y * rowBytes + 1 + left * 3);
  }
  return scanlines;
}
