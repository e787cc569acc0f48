import { open, stat } from 'node:fs/promises';
import { fileTypeFromFile } from 'file-type';
import { imageSizeFromFile } from 'image-size/fromFile';
import { parseFile } from 'music-metadata';
import { mp4Duration } from './mp4-duration.js';

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
 * Sniffs a stored file's real format (file-type), checks that it is whole (format trailers,
 * RIFF size, a parseable duration) and reads its dimensions (image-size) or duration
 * (music-metadata).
 */
export async function probeFile(file: string): Promise<Probe> {
  const sniffed = await fileTypeFromFile(file);
  const mime = normaliseLabel(sniffed?.mime ?? '');
  if (!(SUPPORTED_MEDIA_TYPES as readonly string[]).includes(mime)) {
    throw new ProbeError(
      'unsupported',
      sniffed === undefined
        ? 'the bytes are not a recognised media format'
        : `${sniffed.mime} is not a supported asset format`,
    );
  }
  const mediaType = mime as AssetMediaType;
  await checkWhole(file, mediaType);
  if (mediaType.startsWith('image/')) {
    const size = await imageSizeFromFile(file).catch(() => undefined);
    if (size?.width === undefined || size.height === undefined)
      throw new ProbeError('damaged', 'the image header cannot be read');
    return { mediaType, width: size.width, height: size.height, durationSeconds: null };
  }
  const duration =
    mediaType === 'video/mp4'
      ? await mp4Duration(file).catch(() => undefined)
      : (await parseFile(file, { duration: true }).catch(() => undefined))?.format.duration;
  if (duration === undefined || !Number.isFinite(duration) || duration <= 0)
    throw new ProbeError('damaged', 'the duration cannot be read; the file may be truncated');
  return {
    mediaType,
    width: null,
    height: null,
    durationSeconds: Math.round(duration * 1000) / 1000,
  };
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
