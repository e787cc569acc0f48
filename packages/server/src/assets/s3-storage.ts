import { createReadStream } from 'node:fs';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import { LocalAssetStorage, type AssetStorage, type StagedUpload } from './local-storage.js';

export interface S3Settings {
  readonly endpoint: string | undefined;
  readonly region: string;
  readonly bucket: string;
  readonly prefix: string;
  readonly forcePathStyle: boolean;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

/**
 * Shared asset storage for deployments with several instances: an S3-compatible bucket. Uploads
 * are staged and checked on local disk exactly as with local storage, then put under
 * `<prefix>objects/<aa>/<sha256>` only when accepted, so a refused or half-sent upload never
 * reaches the bucket. Reads are ranged GETs streamed through.
 */
export class S3AssetStorage implements AssetStorage {
  private readonly client: S3Client;
  private readonly staging: LocalAssetStorage;

  constructor(
    private readonly settings: S3Settings,
    stagingDir: string,
  ) {
    this.staging = new LocalAssetStorage(stagingDir);
    this.client = new S3Client({
      region: settings.region,
      forcePathStyle: settings.forcePathStyle,
      credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey },
      // Checksums only where the API requires them: S3-compatible servers differ on the rest.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      ...(settings.endpoint === undefined ? {} : { endpoint: settings.endpoint }),
    });
  }

  stage(body: Readable, maxBytes: number, signal?: AbortSignal): Promise<StagedUpload> {
    return this.staging.stage(body, maxBytes, signal);
  }

  async commit(staged: StagedUpload): Promise<void> {
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.settings.bucket,
        Key: this.key(staged.sha256),
        Body: createReadStream(staged.tempPath),
        ContentLength: staged.bytes,
      }),
    );
    await this.staging.discard(staged);
  }

  discard(staged: StagedUpload): Promise<void> {
    return this.staging.discard(staged);
  }

  async open(sha256: string, range?: { start: number; end: number }): Promise<Readable> {
    const object = await this.client.send(
      new GetObjectCommand({
        Bucket: this.settings.bucket,
        Key: this.key(sha256),
        ...(range === undefined ? {} : { Range: `bytes=${range.start}-${range.end}` }),
      }),
    );
    if (object.Body === undefined) throw new Error(`asset object ${sha256} has no body`);
    return object.Body as Readable;
  }

  async readAll(sha256: string): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of await this.open(sha256))
      chunks.push(Buffer.from(chunk as Uint8Array));
    return Buffer.concat(chunks);
  }

  async remove(sha256: string): Promise<void> {
    // DeleteObject of a missing key succeeds: removing twice is harmless.
    await this.client.send(
      new DeleteObjectCommand({ Bucket: this.settings.bucket, Key: this.key(sha256) }),
    );
  }

  private key(sha256: string): string {
    if (!/^[0-9a-f]{64}$/.test(sha256)) throw new Error('bad content address');
    return `${this.settings.prefix}objects/${sha256.slice(0, 2)}/${sha256}`;
  }

  close(): void {
    this.client.destroy();
  }
}
