import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { LRUCache } from 'lru-cache';
import { SIMULATOR_LIMITS } from './limits.js';
import { paletteOf, toYuv } from './picture.js';
import { VIDEO_ENCODER_WORKER_SOURCE } from './video-encoder-worker.js';

/** What one MP4 shows: the same spec always encodes to the same file. */
export interface VideoSpec {
  readonly pictureSeed: string;
  readonly width: number;
  readonly height: number;
  readonly seconds: number;
}

/** Too many encodings are waiting: the caller should answer 503 and let the client retry. */
export class EncoderBusy extends Error {
  override readonly name = 'EncoderBusy';
}

/**
 * Encodes MP4s with `h264-mp4-encoder` (x264 and minimp4 compiled to WebAssembly; no native
 * binary, no download) in a worker thread, so an encoding never holds the event loop it shares
 * with the gateway. One encoding runs at a time and at most `videoEncodeQueue` wait; each runs
 * in a fresh worker that is terminated after `videoEncodeMs`. Results are cached by spec in a
 * bounded LRU, and concurrent reads of one spec share one encoding.
 */
export class VideoEncoder {
  private readonly modulePath = createRequire(import.meta.url).resolve('h264-mp4-encoder');
  private readonly files = new LRUCache<string, Buffer>({
    max: SIMULATOR_LIMITS.videoFiles,
    maxSize: SIMULATOR_LIMITS.videoFileBytes,
    sizeCalculation: (bytes) => Math.max(1, bytes.length),
  });
  private readonly inFlight = new Map<string, Promise<Buffer>>();
  private queue: Promise<unknown> = Promise.resolve();
  private waiting = 0;
  private readonly workers = new Set<Worker>();
  private closed = false;

  /** The MP4 of `spec`; throws `EncoderBusy` when the queue is full, or the encoding's failure. */
  content(spec: VideoSpec): Promise<Buffer> {
    const key = `${spec.pictureSeed}:${spec.width}x${spec.height}:${spec.seconds}`;
    const cached = this.files.get(key);
    if (cached !== undefined) return Promise.resolve(cached);
    const running = this.inFlight.get(key);
    if (running !== undefined) return running;
    if (this.waiting >= SIMULATOR_LIMITS.videoEncodeQueue)
      return Promise.reject(new EncoderBusy('the video encoder is busy; retry shortly'));
    this.waiting += 1;
    const work = async () => {
      try {
        const bytes = await this.encode(spec);
        this.files.set(key, bytes);
        return bytes;
      } finally {
        this.waiting -= 1;
        this.inFlight.delete(key);
      }
    };
    const result = this.queue.then(work, work);
    this.queue = result.catch(() => undefined);
    this.inFlight.set(key, result);
    return result;
  }

  /** Terminates any running encoding (its reader gets an error). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.workers].map((worker) => worker.terminate()));
  }

  private encode(spec: VideoSpec): Promise<Buffer> {
    if (this.closed) return Promise.reject(new Error('the simulator is closing'));
    const palette = paletteOf(spec.pictureSeed);
    const worker = new Worker(VIDEO_ENCODER_WORKER_SOURCE, {
      eval: true,
      workerData: {
        modulePath: this.modulePath,
        width: spec.width,
        height: spec.height,
        seconds: spec.seconds,
        framesPerSecond: SIMULATOR_LIMITS.videoFramesPerSecond,
        top: toYuv(palette.first),
        bottom: toYuv(palette.second),
        band: toYuv(palette.accent),
      },
    });
    this.workers.add(worker);
    return new Promise<Buffer>((resolve, reject) => {
      let done = false;
      const timer = setTimeout(() => {
        fail(new Error(`video encoding took longer than ${SIMULATOR_LIMITS.videoEncodeMs} ms`));
      }, SIMULATOR_LIMITS.videoEncodeMs);
      /** Frees the worker once, whichever of message, error, exit or timeout comes first. */
      const finish = (): boolean => {
        if (done) return false;
        done = true;
        clearTimeout(timer);
        this.workers.delete(worker);
        void worker.terminate();
        return true;
      };
      const fail = (error: Error) => {
        if (finish()) reject(error);
      };
      worker.once('message', (message: { bytes?: Uint8Array; error?: string }) => {
        if (!finish()) return;
        if (message.bytes === undefined) reject(new Error(message.error ?? 'encoder failed'));
        else
          resolve(
            Buffer.from(message.bytes.buffer, message.bytes.byteOffset, message.bytes.byteLength),
          );
      });
      worker.once('error', fail);
      worker.once('exit', (code) => fail(new Error(`video encoder exited with code ${code}`)));
    });
  }
}
