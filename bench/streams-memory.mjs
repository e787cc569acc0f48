#!/usr/bin/env node
// Resident memory of a gateway holding N concurrent open SSE streams (default 1,000), each
// with a fresh Idempotency-Key and the whole accounting path (auth, record, hold, capture).
// Usage: node bench/streams-memory.mjs --url http://127.0.0.1:18291/v1 --key tgk_... --pid PID [--streams 1000]
// The upstream must stream slowly enough that every stream is still open when RSS is read
// (run.sh starts the reference mock with 100 chunks 100 ms apart: ~10 s per stream).
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';
import { parseFlags, rssMiB } from './lib.mjs';

const args = parseFlags();
const streams = Number(args.streams ?? 1000);
const dispatcher = new Agent({
  connections: streams + 10,
  pipelining: 0,
  headersTimeout: 60_000,
  bodyTimeout: 60_000,
});

const idle = rssMiB(args.pid);
let firstBytes = 0;
let completed = 0;
let failed = 0;
const started = Date.now();
const all = Array.from({ length: streams }, async () => {
  try {
    const response = await request(`${args.url}/chat/completions`, {
      method: 'POST',
      dispatcher,
      headers: {
        authorization: `Bearer ${args.key}`,
        'idempotency-key': randomUUID(),
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        model: 'gpt-4o-mini',
        stream: true,
        max_tokens: 200,
        messages: [{ role: 'user', content: 'hello' }],
      }),
    });
    let first = true;
    let text = '';
    for await (const chunk of response.body) {
      if (first) {
        firstBytes += 1;
        first = false;
      }
      text = (text + chunk.toString()).slice(-64);
    }
    if (response.statusCode === 200 && text.includes('[DONE]')) completed += 1;
    else failed += 1;
  } catch {
    failed += 1;
  }
});
// Wait until every stream is open (first byte received), then sample RSS while they run.
let peak = 0;
while (firstBytes + failed < streams && Date.now() - started < 30_000)
  await new Promise((resolve) => setTimeout(resolve, 50));
const openAt = Date.now() - started;
for (let sample = 0; sample < 10; sample += 1) {
  peak = Math.max(peak, rssMiB(args.pid));
  await new Promise((resolve) => setTimeout(resolve, 200));
}
await Promise.all(all);
await dispatcher.close();
console.log(
  JSON.stringify({
    streams,
    open: firstBytes,
    completed,
    failed,
    allOpenAfterMs: openAt,
    rssIdleMiB: Math.round(idle),
    rssPeakMiB: Math.round(peak),
    perStreamKiB: Math.round(((peak - idle) * 1024) / Math.max(firstBytes, 1)),
  }),
);
// A stream that failed means the figure above is not the accounted path's: fail the run.
if (failed > 0 || completed !== streams) process.exitCode = 1;
