import { Readable } from 'node:stream';

export interface BodyPrefix {
  /** The body's first bytes: `bytes` of them, or fewer when the body is shorter. */
  readonly prefix: Buffer;
  /** The whole body, from its first byte again (the prefix is not lost). */
  readonly body: Readable;
  /** The body ended within the prefix: `prefix` is all of it. */
  readonly whole: boolean;
}

/**
 * Reads the first `bytes` of a body without consuming the rest, so the upload can be judged by
 * its first bytes before anything is written to disk. What was read is pushed back (`unshift`):
 * the returned `body` yields every byte in order. At most one transport chunk more than `bytes`
 * is read (Node hands the body over in socket-sized chunks); nothing else is pulled until the
 * caller reads on. Rejects with the stream's error, or with `signal`'s reason when it aborts
 * (the caller went away).
 */
export function readPrefix(
  body: Readable,
  bytes: number,
  signal: AbortSignal,
): Promise<BodyPrefix> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const cleanUp = () => {
      body.off('readable', onReadable);
      body.off('end', onEnd);
      body.off('error', onError);
      signal.removeEventListener('abort', onAbort);
    };
    const onReadable = () => {
      let chunk: unknown;
      while (length < bytes && (chunk = body.read()) !== null) {
        const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
        chunks.push(buffer);
        length += buffer.length;
      }
      if (length < bytes) return;
      cleanUp();
      const read = Buffer.concat(chunks);
      body.unshift(read);
      resolve({ prefix: read.subarray(0, bytes), body, whole: false });
    };
    const onEnd = () => {
      cleanUp();
      const read = Buffer.concat(chunks);
      resolve({ prefix: read, body: Readable.from(read.length === 0 ? [] : [read]), whole: true });
    };
    const onError = (error: Error) => {
      cleanUp();
      reject(error);
    };
    const onAbort = () => {
      cleanUp();
      reject(abortReason(signal));
    };
    if (signal.aborted) {
      reject(abortReason(signal));
      return;
    }
    body.on('readable', onReadable);
    body.on('end', onEnd);
    body.on('error', onError);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error('the upload was aborted');
}
