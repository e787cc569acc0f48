import type { Tollgate } from '@tollgate/sdk';
import { createReadStream } from 'node:fs';

/** Uploads a file as it is read (never buffered whole) and reads its first kilobyte back. */
export async function uploadClip(client: Tollgate, file: string): Promise<Uint8Array> {
  const asset = await client.assets.upload(createReadStream(file), {
    contentType: 'video/mp4',
    fileName: 'clip.mp4',
  });
  const head = await client.assets.content(asset.id, { range: { start: 0, end: 1023 } });
  return head.bytes();
}
