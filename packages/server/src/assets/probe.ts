import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { fileTypeFromBuffer, fileTypeFromFile } from 'file-type';
import { imageSizeFromFile } from 'image-size/fromFile';
import { parseStream } from 'music-metadata';
import { mp4Info } from './mp4-duration.js';

/** The media types an asset may have, by what its bytes are (never by its label). */
export const SUPPORTED_MEDIA_TYPES = [
  'image/png',
  'image/jpeg',
  'image/webp',
  'image/gif',
  'video/mp4',
  'audio/mpeg',
  'audio/wav',
] as const;
export type AssetMediaType = (typeof SUPPORTED_MEDIA_TYPES)[number];

/** Labels callers use for the same formats. */
const ALIASES: Record<string, AssetMediaType> = {
  'image/jpg': 'image/jpeg',
  'audio/mp3': 'audio/mpeg',
  'audio/x-wav': 'audio/wav',
  'audio/wave': 'audio/wav',
  'audio/vnd.wave': 'audio/wav',
};

export function normaliseLabel(label: string): string {
  const bare = label.split(';')[0]?.trim().toLowerCase() ?? '';
  return ALIASES[bare] ?? bare;
}

export interface Probe {
  mediaType: AssetMediaType;
  width: number | null;
  height: number | null;
  durationSeconds: number | null;
}

export class ProbeError extends Error {
  override readonly name = 'ProbeError';
  constructor(
    readonly reason: 'unsupported' | 'damaged',
    message: string,
  ) {
    super(message);
  }
}

/**
 * How many first bytes of an upload are judged before anything is written to disk: file-type's
 * own detection window (its `reasonableDetectionSizeInBytes`). Every signature of the supported
 * formats lies in it; only an ID3v2 tag (MP3) can push the real signature further (below).
 */
export const SNIFF_WINDOW_BYTES = 4100;

/**
 * Judges an upload by its first bytes, before it is staged: the refusal `probeFile` would give
 * when the prefix already shows a format we do not take (random bytes, text, PDF, ...), or
 * `undefined` when the upload may go on (`probeFile` on the whole file still decides). `whole`:
 * the prefix is the entire body. A prefix that opens with an ID3v2 tag is never refused early
 * unless whole: the tag may end near the window's edge and hide the MP3 frames behind it.
 */
export async function sniffPrefix(prefix: Buffer, whole: boolean): Promise<ProbeError | undefined> {
  const sniffed = await fileTypeFromBuffer(prefix);
  if (isSupported(sniffed?.mime)) return undefined;
  if (!whole && prefix.subarray(0, 3).toString('latin1') === 'ID3') return undefined;
  return unsupported(sniffed);
}

function isSupported(mime: string | undefined): boolean {
  return (SUPPORTED_MEDIA_TYPES as readonly string[]).includes(normaliseLabel(mime ?? ''));
}

function unsupported(sniffed: { mime: string } | undefined): ProbeError {
  return new ProbeError(
    'unsupported',
    sniffed === undefined
      ? 'the bytes are not a recognised media format'
      : `${sniffed.mime} is not a supported asset format`,
  );
}

/**
 * Sniffs a stored file's real format (file-type), checks that it is whole (format trailers,
 * RIFF size, a parseable duration) and reads its dimensions (image-size) or duration
 * (music-metadata).
 */
export async function probeFile(file: string): Promise<Probe> {
  const sniffed = await fileTypeFromFile(file);
  if (!isSupported(sniffed?.mime)) throw unsupported(sniffed);
  const mediaType = normaliseLabel(sniffed?.mime ?? '') as AssetMediaType;
  await checkWhole(file, mediaType);
  if (mediaType.startsWith('image/')) {
    const size = await imageSizeFromFile(file).catch(() => undefined);
    if (size?.width === undefined || size.height === undefined)
      throw new ProbeError('damaged', 'the image header cannot be read');
    return { mediaType, width: size.width, height: size.height, durationSeconds: null };
  }
  const video = mediaType === 'video/mp4' ? await mp4Info(file).catch(() => undefined) : undefined;
  const duration =
    mediaType === 'video/mp4' ? video?.durationSeconds : await audioDuration(file, mediaType);
  if (duration === undefined || !Number.isFinite(duration) || duration <= 0)
    throw new ProbeError('damaged', 'the duration cannot be read; the file may be truncated');
  return {
    mediaType,
    width: video?.width ?? null,
    height: video?.height ?? null,
    durationSeconds: Math.round(duration * 1000) / 1000,
  };
}

/**
 * An audio file's duration by music-metadata, told the format we sniffed: a staged file has no
 * telling extension, and music-metadata's own guess from the first bytes misses an MP3 whose
 * ID3 tag ends right at its detection window.
 */
async function audioDuration(file: string, mediaType: AssetMediaType): Promise<number | undefined> {
  const stream = createReadStream(file);
  try {
    const { size } = await stat(file);
    const metadata = await parseStream(stream, { mimeType: mediaType, size }, { duration: true });
    return metadata.format.duration;
  } catch {
    return undefined;
  } finally {
    stream.destroy();
  }
}

/** A truncated upload must not pass as an asset: check each format's end marker or size field. */
async function checkWhole(file: string, mediaType: AssetMediaType): Promise<void> {
  const { size } = await stat(file);
  const handle = await open(file, 'r');
  try {
    const tail = Buffer.alloc(Math.min(12, size));
    await handle.read(tail, 0, tail.length, size - tail.length);
    const head = Buffer.alloc(Math.min(12, size));
    await handle.read(head, 0, head.length, 0);
    const damaged = (() => {
      switch (mediaType) {
        case 'image/png':
          return !tail.subarray(tail.length - 8, tail.length - 4).equals(Buffer.from('IEND'));
        case 'image/jpeg':
          return !(tail[tail.length - 2] === 0xff && tail[tail.length - 1] === 0xd9);
        case 'image/gif':
          return tail[tail.length - 1] !== 0x3b;
        case 'image/webp':
        case 'audio/wav':
          return head.readUInt32LE(4) + 8 !== size;
        default:
          return false;
      }
    })();
    if (damaged)
      throw new ProbeError('damaged', `the ${mediaType} file is incomplete (truncated or damaged)`);
  } finally {
    await handle.close();
  }
}
