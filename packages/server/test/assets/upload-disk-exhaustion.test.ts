import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import http, { type IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';
import { mp3, wav } from '../helpers/media.js';

/**
 * Uploads are free, so nothing but these checks stops a caller from filling the staging disk:
 * four 256 MiB random-byte uploads labelled image/png once reached about 1 GB of temporary files
 * before each was refused. Now the first bytes are judged before anything is staged, and each
 * account has a staging budget that every upload reserves from and gives back however it ends.
 */

interface UploadResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** An upload over a real connection whose body the test writes piece by piece. */
interface OpenUpload {
  readonly idempotencyKey: string;
  write(bytes: Buffer): Promise<void>;
  end(bytes?: Buffer): void;
  /** Cuts the connection mid-body. */
  cutOff(): void;
  response: Promise<UploadResponse>;
  /** Set once the response has begun: a writer should stop. */
  answered(): boolean;
  /** Resolves when the client's connection has closed. */
  closed: Promise<void>;
}

function openUpload(
  base: URL,
  key: string,
  options: { type: string; length?: number },
): OpenUpload {
  const idempotencyKey = randomUUID();
  let answered = false;
  let closeConnection = () => {};
  const closed = new Promise<void>((resolve) => (closeConnection = resolve));
  const request = http.request({
    host: base.hostname,
    port: base.port,
    path: '/v1/assets',
    method: 'POST',
    agent: false,
    headers: {
      authorization: `Bearer ${key}`,
      'idempotency-key': idempotencyKey,
      'content-type': options.type,
      ...(options.length === undefined ? {} : { 'content-length': String(options.length) }),
    },
  });
  request.on('socket', (socket) => socket.on('close', () => closeConnection()));
  // Send the headers now: the server judges some uploads before any body byte.
  request.flushHeaders();
  const response = new Promise<UploadResponse>((resolve, reject) => {
    request.on('response', (incoming) => {
      answered = true;
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('end', () =>
        resolve({
          status: incoming.statusCode ?? 0,
          headers: incoming.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      incoming.on('error', reject);
    });
    request.on('error', reject);
  });
  // A cut-off or early answer fails the remaining writes; the response promise tells the story.
  response.catch(() => {});
  return {
    idempotencyKey,
    write: (bytes) =>
      new Promise<void>((resolve) => {
        if (request.destroyed || answered) return resolve();
        if (request.write(bytes)) resolve();
        else {
          request.once('drain', () => resolve());
          request.once('close', () => resolve());
        }
      }),
    end: (bytes) => void request.end(bytes),
    cutOff: () => void request.destroy(),
    response,
    answered: () => answered,
    closed,
  };
}

/** An ID3v2.3 tag of `bytes` bytes in all (header and zero padding, which the format allows). */
function id3Tag(bytes: number): Buffer {
  const size = bytes - 10;
  const header = Buffer.from([0x49, 0x44, 0x33, 3, 0, 0, 0, 0, 0, 0]);
  // The tag size is "synchsafe": 7 bits per byte.
  [21, 14, 7, 0].forEach((shift, index) => header.writeUInt8((size >> shift) & 0x7f, 6 + index));
  return Buffer.concat([header, Buffer.alloc(size)]);
}

function tempDirOf(gateway: TestGateway): string {
  return (gateway.services.assets as unknown as { tempDir: string }).tempDir;
}

/** Bytes in the staging directory now. */
function stagedBytes(gateway: TestGateway): number {
  const dir = tempDirOf(gateway);
  if (!existsSync(dir)) return 0;
  let total = 0;
  for (const name of readdirSync(dir)) {
    try {
      total += statSync(path.join(dir, name)).size;
    } catch {
      // Removed between the listing and the stat.
    }
  }
  return total;
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const stagingStarted = (gateway: TestGateway) => () =>
  existsSync(tempDirOf(gateway)) &&
  readdirSync(tempDirOf(gateway)).some((name) => name.endsWith('.part'));

const errorCode = (response: { body: string }) =>
  (JSON.parse(response.body) as { error: { code: string } }).error.code;

describeEachDialect('uploads judged before they fill the disk on $name', (dialect) => {
  describe('judging the first bytes before staging', () => {
    let gateway: TestGateway;
    let base: URL;
    const serverSockets: Socket[] = [];
    beforeAll(async () => {
      gateway = await startGateway(dialect);
      gateway.app.server.on('connection', (socket: Socket) => serverSockets.push(socket));
      base = new URL(await gateway.listen());
    });
    afterAll(async () => {
      await gateway.expectLedgerClean();
      await gateway.close();
    });

    it('refuses a large random-byte body labelled image/png with 415 after its first few KiB: nothing staged, the rest never read', async () => {
      const { key } = await gateway.account(0);
      const stage = vi.spyOn(gateway.services.assets, 'stage');
      let mostStaged = 0;
      const watcher = setInterval(() => {
        mostStaged = Math.max(mostStaged, stagedBytes(gateway));
      }, 2);
      const bodyBytes = 64 * 1024 * 1024;
      const upload = openUpload(base, key, { type: 'image/png', length: bodyBytes });
      // Random bytes as fast as the connection takes them, until the server answers.
      const block = randomBytes(64 * 1024);
      let sent = 0;
      while (sent < bodyBytes && !upload.answered()) {
        await upload.write(block);
        sent += block.length;
      }
      const response = await upload.response;
      await upload.closed;
      clearInterval(watcher);

      expect(response.status, response.body).toBe(415);
      expect(errorCode(response)).toBe('UNSUPPORTED_MEDIA_TYPE');
      expect(response.headers['connection']).toBe('close');
      expect(stage).not.toHaveBeenCalled();
      expect(mostStaged).toBe(0);
      expect(stagedBytes(gateway)).toBe(0);
      // What the server took off the wire: the sniff window, a socket read or two, and the
      // headers; nowhere near the 64 MiB on offer.
      const serverRead = serverSockets.reduce((total, socket) => total + socket.bytesRead, 0);
      expect(serverRead).toBeLessThan(1024 * 1024);
      // Refused before the idempotency claim: no asset, no request record (the key may be reused).
      expect(await gateway.services.store.db.selectFrom('assets').select('id').execute()).toEqual(
        [],
      );
      const record = await gateway.call(
        'GET',
        `/v1/requests?idempotency_key=${upload.idempotencyKey}`,
        { key },
      );
      expect(record.statusCode).toBe(404);
      stage.mockRestore();
    });

    it('refuses it the same way when a fetch client streams it', async () => {
      const { key } = await gateway.account(0);
      const block = randomBytes(64 * 1024);
      let pulled = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          pulled += block.length;
          if (pulled > 64 * 1024 * 1024) controller.close();
          else controller.enqueue(new Uint8Array(block));
        },
      });
      const response = await fetch(`${base.origin}/v1/assets`, {
        method: 'POST',
        body,
        duplex: 'half',
        headers: {
          authorization: `Bearer ${key}`,
          'idempotency-key': randomUUID(),
          'content-type': 'image/png',
        },
      });
      expect(response.status).toBe(415);
      expect(await response.json()).toMatchObject({ error: { code: 'UNSUPPORTED_MEDIA_TYPE' } });
      // The client stopped well short of the 64 MiB it had to offer.
      expect(pulled).toBeLessThan(32 * 1024 * 1024);
      expect(stagedBytes(gateway)).toBe(0);
    });

    it.each([
      ['ends just inside the sniff window', 4_080],
      ['ends at the edge of the sniff window', 4_100],
      ['reaches far past the sniff window', 64 * 1024],
    ])('does not refuse an MP3 early whose ID3 tag %s', async (_name, tagBytes) => {
      const { key } = await gateway.account(0);
      const file = Buffer.concat([id3Tag(tagBytes), mp3(100)]);
      const response = await gateway.upload(key, file, 'audio/mpeg');
      expect(response.statusCode, response.body).toBe(201);
      expect(response.json()).toMatchObject({ data: { media_type: 'audio/mpeg' } });
    });

    it('still stages a real file that is larger than the sniff window', async () => {
      const { key } = await gateway.account(0);
      const file = wav(3);
      const response = await gateway.upload(key, file, 'audio/wav');
      expect(response.statusCode, response.body).toBe(201);
      expect(response.json()).toMatchObject({
        data: { bytes: file.length, media_type: 'audio/wav' },
      });
    });
  });

  describe('the per-account staging budget', () => {
    const budget = 1024 * 1024;
    // 640,044 bytes: one fits the budget, two do not.
    const file = wav(40);
    let gateway: TestGateway;
    let base: URL;
    beforeAll(async () => {
      const defaults = testConfig();
      gateway = await startGateway(dialect, {
        config: testConfig({
          limits: {
            ...defaults.limits,
            staged_upload_bytes_per_account: budget,
            concurrent_uploads_per_account: 3,
          },
        }),
      });
      base = new URL(await gateway.listen());
    });
    afterAll(async () => {
      await gateway.expectLedgerClean();
      await gateway.close();
    });

    /** An upload of `file` from `key` that has begun staging and waits for the rest. */
    async function slowUpload(key: string): Promise<OpenUpload> {
      const upload = openUpload(base, key, { type: 'audio/wav', length: file.length });
      await upload.write(file.subarray(0, 64 * 1024));
      await waitFor(stagingStarted(gateway), 'the slow upload to begin staging');
      return upload;
    }

    it('refuses an upload beyond the budget with 429, shared by every key of the account, and not other accounts', async () => {
      const owner = await gateway.account(0);
      const secondKey = await gateway.newKey(owner.accountId);
      const stranger = await gateway.account(0);
      const first = await slowUpload(owner.key);

      const refused = await gateway.upload(secondKey.key, file, 'audio/wav');
      expect(refused.statusCode, refused.body).toBe(429);
      expect(refused.json()).toMatchObject({ error: { code: 'RATE_LIMITED' } });
      expect(refused.headers['retry-after']).toBe('5');
      const elsewhere = await gateway.upload(stranger.key, file, 'audio/wav');
      expect(elsewhere.statusCode, elsewhere.body).toBe(201);

      // Without a declared length the body is metered as it arrives and cut at the budget.
      const chunked = openUpload(base, owner.key, { type: 'audio/wav' });
      for (let offset = 0; offset < file.length && !chunked.answered(); offset += 32 * 1024)
        await chunked.write(file.subarray(offset, offset + 32 * 1024));
      const chunkedResponse = await chunked.response;
      expect(chunkedResponse.status, chunkedResponse.body).toBe(429);
      expect(errorCode(chunkedResponse)).toBe('RATE_LIMITED');

      first.end(file.subarray(64 * 1024));
      const finished = await first.response;
      expect(finished.status, finished.body).toBe(201);
      const again = await gateway.upload(secondKey.key, wav(41), 'audio/wav');
      expect(again.statusCode, again.body).toBe(201);
      expect(stagedBytes(gateway)).toBe(0);
    });

    it('refuses an upload declared larger than the whole budget with 413 before reading it', async () => {
      const { key } = await gateway.account(0);
      const upload = openUpload(base, key, { type: 'audio/wav', length: budget + 1 });
      const response = await upload.response;
      expect(response.status, response.body).toBe(413);
      expect(errorCode(response)).toBe('BODY_TOO_LARGE');
      upload.cutOff();
    });

    it('caps the uploads one account has in progress at once', async () => {
      const owner = await gateway.account(0);
      const small = wav(1); // 16,044 bytes: three fit the byte budget easily
      const held: OpenUpload[] = [];
      for (let count = 0; count < 3; count += 1) {
        const upload = openUpload(base, owner.key, { type: 'audio/wav', length: small.length });
        await upload.write(small.subarray(0, 8 * 1024));
        held.push(upload);
      }
      const partFiles = () =>
        readdirSync(tempDirOf(gateway)).filter((name) => name.endsWith('.part'));
      await waitFor(
        () => existsSync(tempDirOf(gateway)) && partFiles().length === 3,
        'three uploads staging',
      );

      const refused = await gateway.upload(owner.key, small, 'audio/wav');
      expect(refused.statusCode, refused.body).toBe(429);
      expect(refused.json()).toMatchObject({ error: { code: 'RATE_LIMITED' } });
      for (const upload of held) upload.end(small.subarray(8 * 1024));
      for (const upload of held) expect((await upload.response).status).toBe(201);
      const after = await gateway.upload(owner.key, small, 'audio/wav');
      expect(after.statusCode, after.body).toBe(201);
    });

    it('gives the budget back when an upload is cut off mid-body', async () => {
      const { key } = await gateway.account(0);
      const big = wav(60); // 960,044 bytes: the budget holds one at a time
      const upload = openUpload(base, key, { type: 'audio/wav', length: big.length });
      await upload.write(big.subarray(0, 64 * 1024));
      await waitFor(stagingStarted(gateway), 'the upload to begin staging');
      upload.cutOff();
      await waitFor(() => stagedBytes(gateway) === 0, 'the cut-off upload to be discarded');
      // The reservation is released just after the file is removed: give it a moment.
      let response = await gateway.upload(key, big, 'audio/wav');
      for (let tries = 0; response.statusCode === 429 && tries < 50; tries += 1) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        response = await gateway.upload(key, big, 'audio/wav');
      }
      expect(response.statusCode, response.body).toBe(201);
      expect(readdirSync(tempDirOf(gateway))).toEqual([]);
    });
  });
});
