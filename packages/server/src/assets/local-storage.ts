import { createHash, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';

export class TooLarge extends Error {
  override readonly name = 'TooLarge';
}

/** Where asset bytes live. Uploads are staged locally (hashed and probed) before `commit`. */
export interface AssetStorage {
  stage(body: Readable, maxBytes: number, signal?: AbortSignal): Promise<StagedUpload>;
  /** Makes a staged upload visible at its content address. */
  commit(staged: StagedUpload): Promise<void>;
  discard(staged: StagedUpload): Promise<void>;
  /** The object's bytes `start..end` inclusive, or all of them. */
  open(sha256: string, range?: { start: number; end: number }): Promise<Readable>;
  readAll(sha256: string): Promise<Buffer>;
  /** Deletes an object's bytes; a missing object is not an error. Only assets/asset-objects.ts calls it. */
  remove(sha256: string): Promise<void>;
}

/** A body streamed to a temporary file: nothing is visible until `commit`. */
export interface StagedUpload {
  readonly tempPath: string;
  readonly sha256: string;
  readonly bytes: number;
}

/**
 * Local, content-addressed asset storage under `<dataDir>/assets`. Uploads stream to a temporary
 * file (hashed on the way, capped at `maxBytes`) and are renamed into `objects/<aa>/<sha256>`
 * only when accepted, so a half-written file is never visible and an aborted or refused upload
 * leaves nothing behind. Same bytes, same object: uploads of one file share it.
 */
export class LocalAssetStorage implements AssetStorage {
  private readonly tempDir: string;
  private readonly objectsDir: string;

  constructor(root: string) {
    this.tempDir = path.join(root, 'tmp');
    this.objectsDir = path.join(root, 'objects');
  }

  /** `signal` aborts the upload (the caller went away mid-body); the temporary file is removed. */
  async stage(body: Readable, maxBytes: number, signal?: AbortSignal): Promise<StagedUpload> {
    await mkdir(this.tempDir, { recursive: true });
    const tempPath = path.join(this.tempDir, `${randomUUID()}.part`);
    const hash = createHash('sha256');
    let bytes = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        bytes += chunk.length;
        if (bytes > maxBytes) {
          done(new TooLarge(`the upload is larger than ${maxBytes} bytes`));
          return;
        }
        hash.update(chunk);
        done(null, chunk);
      },
    });
    // Open the file first, so it exists (and can be removed) whatever happens to the stream.
    const handle = await open(tempPath, 'wx');
    try {
      await pipeline(
        body,
        meter,
        handle.createWriteStream(),
        signal === undefined ? {} : { signal },
      );
    } catch (error) {
      await handle.close().catch(() => {});
      await rm(tempPath, { force: true });
      throw error;
    }
    return { tempPath, sha256: hash.digest('hex'), bytes };
  }

  /** Moves a staged upload to its content address (atomic rename on one file system). */
  async commit(staged: StagedUpload): Promise<void> {
    const target = this.objectPath(staged.sha256);
    await mkdir(path.dirname(target), { recursive: true });
    await rename(staged.tempPath, target);
  }

  discard(staged: StagedUpload): Promise<void> {
    return rm(staged.tempPath, { force: true });
  }

  objectPath(sha256: string): string {
    if (!/^[0-9a-f]{64}$/.test(sha256)) throw new Error('bad content address');
    return path.join(this.objectsDir, sha256.slice(0, 2), sha256);
  }

  open(sha256: string, range?: { start: number; end: number }): Promise<Readable> {
    return Promise.resolve(
      createReadStream(
        this.objectPath(sha256),
        range === undefined ? {} : { start: range.start, end: range.end },
      ),
    );
  }

  readAll(sha256: string): Promise<Buffer> {
    return readFile(this.objectPath(sha256));
  }

  remove(sha256: string): Promise<void> {
    return rm(this.objectPath(sha256), { force: true });
  }
}
