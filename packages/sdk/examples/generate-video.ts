import { MaxAmountExceededError, type Tollgate } from '@tollgate/sdk';
import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * Quote, create, wait, settle and download a video, spending at most 0.1 yuan. Run it again
 * after a crash: the journal resumes the same task, nothing is created twice.
 */
export async function generateVideo(client: Tollgate): Promise<void> {
  const input = { model: 'sim-video', prompt: 'a lighthouse at dusk', seconds: 4, size: '320x240' };
  try {
    const delivery = await client.videos.generate(input, { maxAmount: 100_000 });
    console.log(`task ${delivery.task.id}: charged ${delivery.amount} micro-yuan`);
    const video = await client.download(delivery.outputs[0]?.contentPath ?? '');
    await pipeline(Readable.fromWeb(video.body), createWriteStream('lighthouse.mp4'));
  } catch (error) {
    if (!(error instanceof MaxAmountExceededError)) throw error;
    // stage 'quote': nothing was created; stage 'bill': the task waits, unsettled.
    console.error(`${error.stage}: ${error.amount} > ${error.maxAmount}`);
  }
}
