import { ApiError } from '../errors/api-error.js';

/** The answer a `Range` header asks for, per RFC 9110 section 14. */
export type RangeRequest =
  { kind: 'whole' } | { kind: 'single'; start: number; end: number } | { kind: 'unsatisfiable' };

/**
 * Parses `Range: bytes=...` against a representation of `size` bytes. Single ranges
 * (`a-b`, `a-`, `-n`) are served as 206; a syntactically invalid header, another unit or several
 * ranges are answered with the whole content (RFC 9110 lets a server ignore Range; we never
 * build multipart/byteranges). A valid range set none of which overlaps the content is 416.
 */
export function parseRange(header: string | undefined, size: number): RangeRequest {
  if (header === undefined) return { kind: 'whole' };
  const match = /^bytes=(.+)$/i.exec(header.trim());
  if (match === null) return { kind: 'whole' };
  const parts = (match[1] ?? '').split(',').map((part) => part.trim());
  const ranges: { start: number; end: number }[] = [];
  for (const part of parts) {
    const spec = /^(\d*)-(\d*)$/.exec(part);
    if (spec === null || (spec[1] === '' && spec[2] === '')) return { kind: 'whole' };
    const first = spec[1] === '' ? undefined : Number(spec[1]);
    const last = spec[2] === '' ? undefined : Number(spec[2]);
    if (first !== undefined && last !== undefined && last < first) return { kind: 'whole' };
    if (first === undefined) {
      // Suffix range: the last `last` bytes.
      if (last === 0 || size === 0) continue;
      ranges.push({ start: Math.max(0, size - (last ?? 0)), end: size - 1 });
      continue;
    }
    if (first >= size) continue;
    ranges.push({ start: first, end: Math.min(last ?? size - 1, size - 1) });
  }
  if (ranges.length === 0) return { kind: 'unsatisfiable' };
  if (parts.length > 1) return { kind: 'whole' };
  const [range] = ranges;
  return range === undefined ? { kind: 'whole' } : { kind: 'single', ...range };
}

/**
 * The 416 for an unsatisfiable range: its own code (a 416 must not carry a 400 code) and a
 * `Content-Range` with the unsatisfied-range star and the current length, as RFC 9110 sections
 * 14.4 and 15.5.17 ask, so the caller learns the size.
 */
export function rangeNotSatisfiable(size: number): ApiError {
  return new ApiError(
    'RANGE_NOT_SATISFIABLE',
    `the requested range is outside the content (${size} bytes)`,
    'Range',
    { 'content-range': `bytes */${size}` },
  );
}
