import { open } from 'node:fs/promises';

/**
 * The duration of an ISO BMFF (MP4) file from its movie header (`moov/mvhd`), in seconds, or
 * undefined when there is none. Reads box headers only, so it costs a few small reads whatever
 * the file size and wherever `moov` sits. (music-metadata reports durations of audio tracks
 * only, and a video-only MP4 still has a length we bill on.)
 */
export async function mp4Duration(file: string): Promise<number | undefined> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    const header = Buffer.alloc(16);
    const readBox = async (offset: number) => {
      const { bytesRead } = await handle.read(header, 0, 16, offset);
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
        if (box.type === type)
          return { start: offset + box.headerLength, end: offset + box.length };
        offset += box.length;
      }
      return undefined;
    };
    const moov = await find('moov', 0, size);
    if (moov === undefined) return undefined;
    const mvhd = await find('mvhd', moov.start, moov.end);
    if (mvhd === undefined) return undefined;
    const body = Buffer.alloc(32);
    await handle.read(body, 0, 32, mvhd.start);
    const version = body[0];
    const timescale = version === 1 ? body.readUInt32BE(20) : body.readUInt32BE(12);
    const duration = version === 1 ? Number(body.readBigUInt64BE(24)) : body.readUInt32BE(16);
    return timescale > 0 && duration > 0 ? duration / timescale : undefined;
  } finally {
    await handle.close();
  }
}
