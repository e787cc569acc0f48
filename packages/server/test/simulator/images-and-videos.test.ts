import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mp4Duration } from '../../src/assets/mp4-duration.js';
import { SIMULATOR_LIMITS } from '../../src/simulator/limits.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { VideoJobs } from '../../src/simulator/videos.js';

/**
 * Risk: the gateway's task engine prices, stores and delivers what the image and video
 * upstreams report. If the simulator's PNGs or MP4s were not real files of the asked size and
 * length, if its jobs did not move through the OpenAI states, or if a resubmission under one
 * Idempotency-Key made a second job, the engine's tests would pass against an upstream no real
 * one resembles. Everything here talks HTTP to a simulator started alone.
 */

type Json = Record<string, unknown>;
let simulator: Simulator;
let directory: string;
const processHandlers = () => ({
  uncaughtException: process.listeners('uncaughtException').length,
  unhandledRejection: process.listeners('unhandledRejection').length,
});
let handlersAtStart: ReturnType<typeof processHandlers>;

beforeAll(async () => {
  handlersAtStart = processHandlers();
  simulator = await startSimulator();
  directory = await mkdtemp(join(tmpdir(), 'sim-media-'));
});
afterAll(async () => {
  await simulator.close();
  await rm(directory, { recursive: true, force: true });
});

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${simulator.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, body: (await response.json()) as Json };
}

async function get(path: string) {
  const response = await fetch(`${simulator.url}${path}`);
  return { status: response.status, body: (await response.json()) as Json };
}

/** A request that must never be answered: true when the client gave up after `ms` without one. */
async function hangs(path: string, body: unknown, headers: Record<string, string> = {}, ms = 300) {
  try {
    await fetch(`${simulator.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(ms),
    });
    return false;
  } catch (error) {
    return (error as Error).name === 'TimeoutError';
  }
}

/** Decodes an 8-bit RGB PNG far enough to prove it real: signature, IHDR size, inflated pixels. */
function decodePng(bytes: Buffer) {
  expect(bytes.subarray(0, 8)).toEqual(Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]));
  let offset = 8;
  const data: Buffer[] = [];
  let width = 0;
  let height = 0;
  const types: string[] = [];
  while (offset < bytes.length) {
    const length = bytes.readUInt32BE(offset);
    const type = bytes.toString('latin1', offset + 4, offset + 8);
    const body = bytes.subarray(offset + 8, offset + 8 + length);
    types.push(type);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      expect([body[8], body[9]]).toEqual([8, 2]); // 8 bits, RGB
    }
    if (type === 'IDAT') data.push(body);
    offset += 12 + length;
  }
  expect(types[0]).toBe('IHDR');
  expect(types.at(-1)).toBe('IEND');
  const pixels = inflateSync(Buffer.concat(data));
  expect(pixels.length).toBe(height * (1 + width * 3));
  return { width, height, pixels };
}

/** Width and height from the MP4's track header, and the duration from its movie header. */
async function inspectMp4(bytes: Buffer) {
  expect(bytes.toString('latin1', 4, 8)).toBe('ftyp');
  expect(bytes.includes(Buffer.from('avc1'))).toBe(true);
  const tkhd = bytes.indexOf(Buffer.from('tkhd'));
  expect(tkhd).toBeGreaterThan(0);
  const version = bytes[tkhd + 4];
  // Width and height are the last two 16.16 fixed-point fields of the track header.
  const sizeAt = tkhd + 4 + (version === 1 ? 88 : 76);
  const file = join(directory, `${Math.random().toString(36).slice(2)}.mp4`);
  await writeFile(file, bytes);
  return {
    width: bytes.readUInt32BE(sizeAt) / 65536,
    height: bytes.readUInt32BE(sizeAt + 4) / 65536,
    seconds: await mp4Duration(file),
  };
}

/** Polls a video until it leaves queued/in_progress, within `ms`; returns every status seen. */
async function untilFinished(id: string, ms = 3_000) {
  const seen: string[] = [];
  const deadline = Date.now() + ms;
  for (;;) {
    const { status, body } = await get(`/v1/videos/${id}`);
    expect(status).toBe(200);
    if (seen.at(-1) !== body['status']) seen.push(String(body['status']));
    if (body['status'] !== 'queued' && body['status'] !== 'in_progress') return { body, seen };
    if (Date.now() > deadline) throw new Error(`video ${id} still ${String(body['status'])}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('simulated images (OpenAI Images API)', () => {
  const image = (prompt: string, extra: Json = {}) => ({
    model: 'sim-image',
    prompt,
    size: '96x64',
    ...extra,
  });
  const png = (body: Json, index = 0) =>
    Buffer.from(String((body['data'] as Json[])[index]?.['b64_json']), 'base64');

  it('answers n real PNGs of exactly the asked size, the same bytes for the same prompt, another picture for another prompt', async () => {
    const first = await post('/v1/images/generations', image('a red fox', { n: 2 }));
    expect(first.status).toBe(200);
    expect(first.body['usage']).toEqual({ images: 2 });
    expect(first.body['data']).toHaveLength(2);
    expect(typeof first.body['created']).toBe('number');
    const decoded = decodePng(png(first.body));
    expect([decoded.width, decoded.height]).toEqual([96, 64]);
    expect(decodePng(png(first.body, 1)).width).toBe(96);
    expect(png(first.body, 1).equals(png(first.body))).toBe(false);

    const again = await post('/v1/images/generations', image('a red fox', { n: 2 }));
    expect(png(again.body).equals(png(first.body))).toBe(true);
    const other = await post('/v1/images/generations', image('a blue whale'));
    expect(decodePng(png(other.body)).pixels.equals(decoded.pixels)).toBe(false);

    const large = await post('/v1/images/generations', image('big', { size: '2048x1536' }));
    expect(decodePng(png(large.body))).toMatchObject({ width: 2048, height: 1536 });
  });

  it('delivers K pictures with [sim:deliver_images=K] and reports K, so the gateway prices what was delivered', async () => {
    const one = await post(
      '/v1/images/generations',
      image('cats [sim:deliver_images=1]', { n: 3 }),
    );
    expect(one.status).toBe(200);
    expect(one.body['data']).toHaveLength(1);
    expect(one.body['usage']).toEqual({ images: 1 });
    // The directive is not part of the picture: same bytes as without it.
    const plain = await post('/v1/images/generations', image('cats'));
    expect(png(one.body).equals(png(plain.body))).toBe(true);

    const none = await post(
      '/v1/images/generations',
      image('cats [sim:deliver_images=0]', { n: 2 }),
    );
    expect(none.body).toMatchObject({ data: [], usage: { images: 0 } });
    const more = await post(
      '/v1/images/generations',
      image('cats [sim:deliver_images=3]', { n: 2 }),
    );
    expect(more.status).toBe(400);
    expect(JSON.stringify(more.body)).toMatch(/deliver_images/);
  });

  it('answers response_format url with a PNG served by the simulator itself', async () => {
    const { status, body } = await post(
      '/v1/images/generations',
      image('a lighthouse', { response_format: 'url' }),
    );
    expect(status).toBe(200);
    const url = String((body['data'] as Json[])[0]?.['url']);
    expect(url.startsWith(`${simulator.url}/v1/images/files/`)).toBe(true);
    const file = await fetch(url);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('image/png');
    const bytes = Buffer.from(await file.arrayBuffer());
    expect(decodePng(bytes)).toMatchObject({ width: 96, height: 64 });
    const b64 = await post('/v1/images/generations', image('a lighthouse'));
    expect(bytes.equals(png(b64.body))).toBe(true);
    expect((await fetch(`${simulator.url}/v1/images/files/img_${'0'.repeat(24)}.png`)).status).toBe(
      404,
    );
  });

  it('fails with 500 generation_failed on [sim:task=fail], the asked status on [sim:fail=STATUS], and never answers on [sim:task=unknown]', async () => {
    const failed = await post('/v1/images/generations', image('x [sim:task=fail]'));
    expect(failed.status).toBe(500);
    expect(failed.body['error']).toMatchObject({ code: 'generation_failed' });
    const refused = await post('/v1/images/generations', image('x [sim:fail=429]'));
    expect(refused.status).toBe(429);
    expect(await hangs('/v1/images/generations', image('x [sim:task=unknown]'))).toBe(true);
  });

  it('refuses what would make it generate without bound: n above 4, sides outside 64..2048, an endless prompt', async () => {
    const cases: [Json, RegExp][] = [
      [image('x', { n: 100 }), /\bn\b/],
      [image('x', { n: 0 }), /\bn\b/],
      [image('x', { size: '99999x1' }), /size/],
      [image('x', { size: '4096x4096' }), /size/],
      [image('x', { size: '63x64' }), /size/],
      [image('x'.repeat(32_001)), /prompt/],
      [image('x', { response_format: 'gif' }), /response_format/],
      [{ model: 'sim-image' }, /prompt/],
    ];
    for (const [body, field] of cases) {
      const answer = await post('/v1/images/generations', body);
      expect(answer.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(String((answer.body['error'] as Json)['message'])).toMatch(field);
    }
  });
});

describe('simulated videos (OpenAI Videos API)', () => {
  const video = (prompt: string, extra: Json = {}) => ({
    model: 'sim-video',
    prompt,
    seconds: '2',
    size: '128x96',
    ...extra,
  });

  it('moves a job queued -> in_progress -> completed within about a second and serves a real MP4 of the asked size and length', async () => {
    const created = await post('/v1/videos', video('a sunrise'));
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      object: 'video',
      model: 'sim-video',
      status: 'queued',
      progress: 0,
      seconds: '2',
      size: '128x96',
    });
    const id = String(created.body['id']);
    expect(id).toMatch(/^video_[0-9a-f]{32}$/);
    const early = await fetch(`${simulator.url}/v1/videos/${id}/content`);
    expect(early.status).toBe(404);
    expect(((await early.json()) as { error: Json }).error['code']).toBe('video_not_ready');

    const started = Date.now();
    const { body, seen } = await untilFinished(id);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(seen).toContain('in_progress');
    expect(body).toMatchObject({ status: 'completed', progress: 100, usage: { seconds: 2 } });
    expect(typeof body['completed_at']).toBe('number');

    const content = await fetch(`${simulator.url}/v1/videos/${id}/content`);
    expect(content.status).toBe(200);
    expect(content.headers.get('content-type')).toBe('video/mp4');
    const bytes = Buffer.from(await content.arrayBuffer());
    expect(Number(content.headers.get('content-length'))).toBe(bytes.length);
    const mp4 = await inspectMp4(bytes);
    expect([mp4.width, mp4.height]).toEqual([128, 96]);
    expect(Math.abs((mp4.seconds ?? 0) - 2)).toBeLessThan(0.5);

    // The encoder (an emscripten build that installs process-wide error handlers on load) ran
    // in a worker thread: the handlers of the process hosting the gateway are untouched.
    expect(processHandlers()).toEqual(handlersAtStart);

    const range = await fetch(`${simulator.url}/v1/videos/${id}/content`, {
      headers: { range: 'bytes=0-7' },
    });
    expect(range.status).toBe(206);
    expect(range.headers.get('content-range')).toBe(`bytes 0-7/${bytes.length}`);
    expect(Buffer.from(await range.arrayBuffer()).equals(bytes.subarray(0, 8))).toBe(true);
  });

  it('delivers N seconds with [sim:deliver_seconds=N], reports N, and the file lasts N seconds', async () => {
    const created = await post(
      '/v1/videos',
      video('a river [sim:deliver_seconds=3] [sim:task_seconds=0]', { seconds: 1 }),
    );
    expect(created.body).toMatchObject({
      status: 'completed',
      seconds: '1',
      usage: { seconds: 3 },
    });
    const content = await fetch(`${simulator.url}/v1/videos/${String(created.body['id'])}/content`);
    const mp4 = await inspectMp4(Buffer.from(await content.arrayBuffer()));
    expect(Math.abs((mp4.seconds ?? 0) - 3)).toBeLessThan(0.5);
  });

  it('fails unbilled on [sim:task=fail] and billed for the asked seconds on [sim:task=fail_billed], with no content', async () => {
    for (const [directive, usage] of [
      ['[sim:task=fail]', { seconds: 0, billed: false }],
      ['[sim:task=fail_billed]', { seconds: 2, billed: true }],
    ] as const) {
      const created = await post('/v1/videos', video(`storm ${directive} [sim:task_seconds=0]`));
      expect(created.status).toBe(200);
      const { body } = await untilFinished(String(created.body['id']));
      expect(body).toMatchObject({ status: 'failed', usage, error: { code: 'generation_failed' } });
      expect(body['completed_at']).toBeUndefined();
      const content = await fetch(`${simulator.url}/v1/videos/${String(body['id'])}/content`);
      expect(content.status).toBe(404);
    }
  });

  it('creates one job per Idempotency-Key: a second POST returns the same video, another body under the key is 409', async () => {
    const key = `key-${Math.random()}`;
    const first = await post('/v1/videos', video('a harbour'), { 'idempotency-key': key });
    const second = await post('/v1/videos', video('a harbour'), { 'idempotency-key': key });
    expect(second.status).toBe(200);
    expect(second.body['id']).toBe(first.body['id']);
    const conflicting = await post('/v1/videos', video('another harbour'), {
      'idempotency-key': key,
    });
    expect(conflicting.status).toBe(409);
    const lookup = await get(`/v1/videos?idempotency_key=${encodeURIComponent(key)}`);
    expect(lookup.body).toMatchObject({ object: 'list', data: [{ id: first.body['id'] }] });
    const unknownKey = await get('/v1/videos?idempotency_key=never-used');
    expect(unknownKey.body).toEqual({ object: 'list', data: [] });
  });

  it('on [sim:task=unknown] creates the job but never answers; the key lookup and a resubmission find it', async () => {
    const key = `unknown-${Math.random()}`;
    const body = video('a comet [sim:task=unknown] [sim:task_seconds=0]');
    expect(await hangs('/v1/videos', body, { 'idempotency-key': key })).toBe(true);
    const lookup = await get(`/v1/videos?idempotency_key=${encodeURIComponent(key)}`);
    expect(lookup.body['data']).toHaveLength(1);
    const found = (lookup.body['data'] as Json[])[0] ?? {};
    expect(found).toMatchObject({ status: 'completed', usage: { seconds: 2 } });
    const again = await post('/v1/videos', body, { 'idempotency-key': key });
    expect(again.status).toBe(200);
    expect(again.body['id']).toBe(found['id']);
  });

  it('answers [sim:fail=STATUS] on the POST without creating a job', async () => {
    const key = `fail-${Math.random()}`;
    const failed = await post('/v1/videos', video('x [sim:fail=503]'), { 'idempotency-key': key });
    expect(failed.status).toBe(503);
    const lookup = await get(`/v1/videos?idempotency_key=${encodeURIComponent(key)}`);
    expect(lookup.body['data']).toEqual([]);
  });

  it('refuses what would make it encode without bound: seconds 1000, sides outside 64..1920 or odd, a long key', async () => {
    const cases: [Json, RegExp][] = [
      [video('x', { seconds: 1000 }), /seconds/],
      [video('x', { seconds: '1000' }), /seconds/],
      [video('x', { seconds: 0 }), /seconds/],
      [video('x', { seconds: 2.5 }), /seconds/],
      [video('x', { size: '99999x1' }), /size/],
      [video('x', { size: '1922x1080' }), /size/],
      [video('x', { size: '129x96' }), /size/],
      [video('x [sim:task_seconds=3601]'), /task_seconds/],
      [video('x [sim:deliver_seconds=21]'), /deliver_seconds/],
    ];
    for (const [body, field] of cases) {
      const answer = await post('/v1/videos', body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(String((answer.body['error'] as Json)['message'])).toMatch(field);
    }
    const longKey = await post('/v1/videos', video('x'), { 'idempotency-key': 'k'.repeat(256) });
    expect(longKey.status).toBe(400);
    expect((await get(`/v1/videos/video_${'0'.repeat(32)}`)).status).toBe(404);
  });
});

describe('video jobs follow the injected clock, not timers', () => {
  let clock = 1_700_000_000_000;
  let timed: Simulator;
  beforeAll(async () => {
    timed = await startSimulator({ now: () => clock });
  });
  afterAll(() => timed.close());

  it('is queued, then in progress with progress in proportion, then completed at creation + task_seconds', async () => {
    const created = await fetch(`${timed.url}/v1/videos`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'sim-video',
        prompt: 'slow [sim:task_seconds=600]',
        seconds: 4,
      }),
    });
    const id = String(((await created.json()) as Json)['id']);
    const at = async (offsetMs: number) => {
      clock = 1_700_000_000_000 + offsetMs;
      return (await (await fetch(`${timed.url}/v1/videos/${id}`)).json()) as Json;
    };
    expect(await at(60_000)).toMatchObject({ status: 'queued', progress: 0 });
    expect(await at(300_000)).toMatchObject({ status: 'in_progress', progress: 50 });
    expect(await at(599_999)).toMatchObject({ status: 'in_progress', progress: 99 });
    expect(await at(600_000)).toMatchObject({
      status: 'completed',
      progress: 100,
      created_at: 1_700_000_000,
      completed_at: 1_700_000_600,
      usage: { seconds: 4 },
    });
  });
});

describe('the video job store is bounded', () => {
  const request = { model: 'sim-video', prompt: 'p', seconds: 1, width: 64, height: 64 };

  it('refuses a new job while all 10,000 are unfinished, then evicts the oldest finished one and forgets its key', () => {
    let clock = 0;
    const jobs = new VideoJobs(() => clock);
    const first = jobs.create(request, 'p', { taskSeconds: 10 }, 'first-key');
    for (let index = 1; index < SIMULATOR_LIMITS.videoJobs; index += 1)
      jobs.create(request, 'p', { taskSeconds: 3_600 }, undefined);
    expect(jobs.create(request, 'p', {}, undefined)).toBeUndefined();

    clock = 10_000; // the first job is finished now, the others are not
    const next = jobs.create(request, 'p', {}, undefined);
    expect(next).toBeDefined();
    expect(jobs.get(first?.id ?? '')).toBeUndefined();
    expect(jobs.byIdempotencyKey('first-key')).toBeUndefined();
    expect(jobs.create(request, 'p', {}, undefined)).toBeUndefined();
  });
});
