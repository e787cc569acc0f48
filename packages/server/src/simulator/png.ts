import { promisify } from 'node:util';
import { crc32, deflate } from 'node:zlib';

const deflateAsync = promisify(deflate);
const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(data, crc32(head.subarray(4))), 0);
  return Buffer.concat([head, data, crc]);
}

/**
 * A PNG (8-bit RGB, not interlaced) from raw scanlines: `height` rows of one filter byte and
 * `width` × 3 bytes. The whole format is four chunks, so a dependency would add nothing;
 * compression runs on libuv's thread pool (`zlib.deflate`), not on the event loop.
 */
export async function encodePng(width: number, height: number, scanlines: Buffer): Promise<Buffer> {
  if (scanlines.length !== height * (1 + width * 3))
    throw new RangeError(
      `scanlines hold ${scanlines.length} bytes, not ${height} rows of ${width}`,
    );
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bits per sample
  header[9] = 2; // colour type: RGB
  // Compression, filter and interlace methods: 0 (the only defined ones; no interlace).
  const data = await deflateAsync(scanlines);
  return Buffer.concat([
    SIGNATURE,
    chunk('IHDR', header),
    chunk('IDAT', data),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
