#!/usr/bin/env node
// Asset throughput and memory: uploads a file of --size MiB (default 1024) through the gateway,
// downloads it again, then runs --readers (default 100) concurrent Range reads of it, sampling the
// gateway's resident memory throughout. Usage:
//   node bench/assets.mjs --url http://127.0.0.1:18293/v1 --key tgk_... --pid PID [--size 1024] [--readers 100]
// The uploaded file is a WAV (a header and silence), generated on the fly, never held in memory.
import { randomUUID } from 'node:crypto';
import { Buffer } from 'node:buffer';
import { Readable } from 'node:stream';
import { clearInterval, setInterval } from 'node:timers';
import { Agent, request } from 'undici';
import { parseFlags, rssMiB } from './lib.mjs';

const args = parseFlags();
const size = Number(args.size ?? 1024) * 1024 * 1024;
const readers = Number(args.readers ?? 100);
const dispatcher = new Agent({
  connections: readers + 4,
  headersTimeout: 600_000,
  bodyTimeout: 600_000,
});
let peak = 0;
const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(args.pid))), 50);
const idle = rssMiB(args.pid);

function* wavChunks() {
  const dataBytes = size - 44;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(2, 22);
  header.writeUInt32LE(48_000, 24);
  header.writeUInt32LE(192_000, 28);
  header.writeUInt16LE(4, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(dataBytes, 40);
  yield header;
  const block = Buffer.alloc(1024 * 1024);
  for (let left = dataBytes; left > 0; left -= block.length)
    yield left >= block.length ? block : block.subarray(0, left);
}

const headers = { authorization: `Bearer ${args.key}` };
let started = process.hrtime.bigint();
const uploaded = await request(`${args.url}/assets`, {
  method: 'POST',
  dispatcher,
  headers: {
    ...headers,
    'idempotency-key': randomUUID(),
    'content-type': 'audio/wav',
    'content-length': String(size),
  },
  body: Readable.from(wavChunks()),
});
const asset = await uploaded.body.json();
const uploadSeconds = Number(process.hrtime.bigint() - started) / 1e9;
const uploadPeak = peak;
if (uploaded.statusCode !== 201)
  throw new Error(`upload failed: ${uploaded.statusCode} ${JSON.stringify(asset)}`);
const id = asset.data.id;

peak = rssMiB(args.pid);
started = process.hrtime.bigint();
const download = await request(`${args.url}/assets/${id}/content`, { dispatcher, headers });
let received = 0;
for await (const chunk of download.body) received += chunk.length;
const downloadSeconds = Number(process.hrtime.bigint() - started) / 1e9;
const downloadPeak = peak;

peak = rssMiB(args.pid);
started = process.hrtime.bigint();
const latencies = await Promise.all(
  Array.from({ length: readers }, async (_, index) => {
    const start = Math.floor(((index + 0.5) / readers) * (size - 1024 * 1024));
    const t0 = process.hrtime.bigint();
    const response = await request(`${args.url}/assets/${id}/content`, {
      dispatcher,
      headers: { ...headers, range: `bytes=${start}-${start + 1024 * 1024 - 1}` },
    });
    let bytes = 0;
    for await (const chunk of response.body) bytes += chunk.length;
    if (response.statusCode !== 206 || bytes !== 1024 * 1024)
      throw new Error(`range read failed: ${response.statusCode} ${bytes}`);
    return Number(process.hrtime.bigint() - t0) / 1e6;
  }),
);
const rangeSeconds = Number(process.hrtime.bigint() - started) / 1e9;
clearInterval(sampler);
latencies.sort((a, b) => a - b);
const mib = size / 1024 / 1024;
console.log(
  JSON.stringify({
    sizeMiB: mib,
    upload: {
      seconds: +uploadSeconds.toFixed(2),
      MiBps: Math.round(mib / uploadSeconds),
      rssPeakMiB: Math.round(uploadPeak),
      rssIdleMiB: Math.round(idle),
    },
    download: {
      seconds: +downloadSeconds.toFixed(2),
      MiBps: Math.round(mib / downloadSeconds),
      bytesOk: received === size,
      rssPeakMiB: Math.round(downloadPeak),
    },
    rangeReads: {
      readers,
      eachMiB: 1,
      seconds: +rangeSeconds.toFixed(2),
      p50ms: +latencies[Math.floor(readers / 2)].toFixed(1),
      p99ms: +latencies[Math.floor(readers * 0.99)].toFixed(1),
      rssPeakMiB: Math.round(peak),
    },
  }),
);
await dispatcher.close();
