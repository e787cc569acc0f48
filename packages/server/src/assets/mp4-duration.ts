import { open } from 'node:fs/promises';

/** The duration of an MP4 in seconds (see `mp4Info`), or undefined. */
export async function mp4Duration(file: string): Promise<number | undefined> {
  return (await mp4Info(file)).durationSeconds;
}

export interface Mp4Info {
  readonly durationSeconds: number | undefined;
  /** The first video track's display size (`tkhd`), when there is one. */
  readonly width: number | undefined;
  readonly height: number | undefined;
}

/** Random access to the bytes of a file or a buffer: reads at most `length` bytes at `position`. */
interface ByteSource {
  readonly size: number;
  read(into: Buffer, length: number, position: number): Promise<number>;
}

/**
 * An ISO BMFF (MP4) file's duration from its movie header (`moov/mvhd`) and the display size of
 * its first visual track (`moov/trak/tkhd`). Reads box headers only, so it costs a few small
 * reads whatever the file size and wherever `moov` sits. (music-metadata reports durations of
 * audio tracks only, and a video-only MP4 still has a length we bill on.)
 */
export async function mp4Info(file: string): Promise<Mp4Info> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    return await readMp4Info({
      size,
      read: async (into, length, position) =>
        (await handle.read(into, 0, length, position)).bytesRead,
    });
  } finally {
    await handle.close();
  }
}

/**
 * `mp4Info` of bytes already in memory (the simulator reads a `reference_video` sent as a data
 * URI). Walks box headers only: at most one step per 8 bytes of `bytes`, copying 96 bytes at most.
 */
export function mp4InfoOfBytes(bytes: Buffer): Promise<Mp4Info> {
  return readMp4Info({
    size: bytes.length,
    read: (into, length, position) =>
      Promise.resolve(
        position >= bytes.length ? 0 : bytes.copy(into, 0, position, position + length),
      ),
  });
}

async function readMp4Info(source: ByteSource): Promise<Mp4Info> {
  const none: Mp4Info = { durationSeconds: undefined, width: undefined, height: undefined };
  const { size } = source;
  const header = Buffer.alloc(16);
  const readBox = async (offset: number) => {
    const bytesRead = await source.read(header, 16, offset);
    if (bytesRead < 8) return undefined;
    let length = header.readUInt32BE(0);
    const type = header.toString('latin1', 4, 8);
    let headerLength = 8;
    if (length === 1 && bytesRead >= 16) {
      length = Number(header.readBigUInt64BE(8));
      headerLength = 16;
    } else if (length === 0) {
      length = size - offset;
    }
    return length < headerLength ? undefined : { type, length, headerLength };
  };
  const find = async (type: string, start: number, end: number) => {
    for (let offset = start; offset + 8 <= end;) {
      const box = await readBox(offset);
      if (box === undefined) return undefined;
      if (box.type === type) return { start: offset + box.headerLength, end: offset + box.length };
      offset += box.length;
    }
    return undefined;
  };
  const moov = await find('moov', 0, size);
  if (moov === undefined) return none;
  const mvhd = await find('mvhd', moov.start, moov.end);
  if (mvhd === undefined) return none;
  const body = Buffer.alloc(32);
  await source.read(body, 32, mvhd.start);
  const version = body[0];
  const timescale = version === 1 ? body.readUInt32BE(20) : body.readUInt32BE(12);
  const duration = version === 1 ? Number(body.readBigUInt64BE(24)) : body.readUInt32BE(16);
  const durationSeconds = timescale > 0 && duration > 0 ? duration / timescale : undefined;
  // Track headers: width and height are 16.16 fixed point at the end of `tkhd` (offset 76 in
  // version 0, 88 in version 1); audio tracks have 0.
  for (let offset = moov.start; offset + 8 <= moov.end;) {
    const box = await readBox(offset);
    if (box === undefined) break;
    if (box.type === 'trak') {
      const tkhd = await find('tkhd', offset + box.headerLength, offset + box.length);
      if (tkhd !== undefined) {
        const track = Buffer.alloc(96);
        const bytesRead = await source.read(track, 96, tkhd.start);
        const at = track[0] === 1 ? 88 : 76;
        if (bytesRead >= at + 8) {
          const width = track.readUInt32BE(at) >>> 16;
          const height = track.readUInt32BE(at + 4) >>> 16;
          if (width > 0 && height > 0) return { durationSeconds, width, height };
        }
      }
    }
    offset += box.length;
  }
  return { durationSeconds, width: undefined, height: undefined };
}
