import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mp4Info, mp4InfoOfBytes } from '../../src/assets/mp4-duration.js';
import { videoSize } from '../../src/simulator/h3-output.js';
import { SIMULATOR_LIMITS } from '../../src/simulator/limits.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { countTokens } from '../../src/simulator/tokens.js';
import {
  dataUri,
  h3Client,
  H3_TASKS as TASKS,
  textItem as text,
  videoItem as sourceVideo,
  type Json,
} from '../helpers/h3-simulator.js';
import { mp4, png } from '../helpers/media.js';

/**
 * Risk: the gateway's H3 engine prices, stores and delivers what the `sim-h3` upstream reports.
 * If its videos were not real MP4s of the asked length and of a size following resolution and
 * ratio, if regenerate were not derived from the source video, or if understand's text and
 * tokens did not follow the documented rules, the engine's tests would pass against an upstream
 * no real one resembles. All of it over HTTP, against a simulator whose clock the test moves.
 */

let simulator: Simulator;
let directory: string;
let clock = Date.UTC(2026, 0, 1);
let files = 0;
const { submit, read, finished, download, videoOf } = h3Client(
  () => simulator,
  () => (clock += 60_000),
);

beforeAll(async () => {
  simulator = await startSimulator({ now: () => clock });
  directory = await mkdtemp(join(tmpdir(), 'sim-h3-'));
});
afterAll(async () => {
  await simulator.close();
  await rm(directory, { recursive: true, force: true });
});

/** Seconds and size read from a file, by the gateway's own reader of stored assets. */
async function inspect(bytes: Buffer) {
  const file = join(directory, `${++files}.mp4`);
  await writeFile(file, bytes);
  const info = await mp4Info(file);
  expect(await mp4InfoOfBytes(bytes)).toEqual(info);
  return info;
}

describe('generate', () => {
  it('delivers a real MP4 of the asked seconds, its size from resolution and ratio, at an absolute URL', async () => {
    const task = await finished({
      model: 'sim-h3',
      content: [text('a red fox')],
      resolution: '480p',
      ratio: '9:16',
      duration: 2,
    });
    expect(task).toMatchObject({ status: 'succeeded', resolution: '480p', ratio: '9:16' });
    expect(task['id']).toMatch(/^cgt-[0-9a-f]{24}$/);
    expect(task['duration']).toBe(2);
    expect(task['error']).toBeNull();
    const url = (task['content'] as Json)['video_url'];
    expect(url).toBe(`${simulator.url}${TASKS}/${String(task['id'])}/video.mp4`);
    const bytes = await videoOf(task);
    expect(await inspect(bytes)).toEqual({ durationSeconds: 2, width: 96, height: 170 });
    const part = await download(task, 'bytes=0-9');
    expect(part.status).toBe(206);
    expect(Buffer.from(await part.arrayBuffer())).toEqual(bytes.subarray(0, 10));

    const square = await finished({
      model: 'sim-h3',
      content: [text('a red fox')],
      resolution: '1080p',
      ratio: '1:1',
      duration: 1,
    });
    expect(await inspect(await videoOf(square))).toMatchObject({ width: 160, height: 160 });
  });

  it('defaults to 720p 16:9 for 5 seconds, and deliver_seconds sets the file length', async () => {
    const task = await finished({
      model: 'sim-h3',
      content: [text('a blue whale [sim:deliver_seconds=1]')],
    });
    expect(task).toMatchObject({ resolution: '720p', ratio: '16:9', duration: 1 });
    expect(await inspect(await videoOf(task))).toEqual({
      durationSeconds: 1,
      width: 228,
      height: 128,
    });
  });

  it('sizes every resolution and ratio small and even, the long side capped', () => {
    expect(videoSize('480p', '16:9')).toEqual({ width: 170, height: 96 });
    expect(videoSize('720p', '9:16')).toEqual({ width: 128, height: 228 });
    expect(videoSize('2K', '21:9')).toEqual({ width: 448, height: 192 });
    expect(videoSize('1080p', '1:9999')).toEqual({
      width: 160,
      height: SIMULATOR_LIMITS.videoSide.max,
    });
  });

  it('draws the same file for the same prompt and references, another for another', async () => {
    const body = (prompt: string, references: unknown[] = []) => ({
      model: 'sim-h3',
      content: [text(prompt), ...references],
      resolution: '480p',
      duration: 1,
    });
    const frame = {
      type: 'image_url',
      image_url: { url: dataUri('image/png', png(8, 8)) },
      role: 'first_frame',
    };
    const first = await videoOf(await finished(body('a green field')));
    expect((await videoOf(await finished(body('a green field')))).equals(first)).toBe(true);
    expect((await videoOf(await finished(body('a grey field')))).equals(first)).toBe(false);
    expect((await videoOf(await finished(body('a green field', [frame])))).equals(first)).toBe(
      false,
    );
  });

  it('moves from queued to running to succeeded with the clock; the file is 404 until then', async () => {
    const { body } = await submit({
      model: 'sim-h3',
      content: [text('a slow boat [sim:deliver_seconds=1]')],
      duration: 3,
    });
    const path = `${TASKS}/${String(body['id'])}`;
    const created = clock;
    expect((await read(path)).body).toMatchObject({
      status: 'queued',
      created_at: Math.floor(created / 1000),
      updated_at: Math.floor(created / 1000),
      duration: 3,
      error: null,
    });
    expect((await read(`${path}/video.mp4`)).body).toMatchObject({
      error: { code: 'video_not_ready' },
    });
    clock += 500;
    expect((await read(path)).body['status']).toBe('running');
    clock += 500;
    expect((await read(path)).body).toMatchObject({
      status: 'succeeded',
      updated_at: Math.floor((created + 1000) / 1000),
      duration: 1,
    });
    expect((await read(`${TASKS}/cgt-000000000000000000000000`)).status).toBe(404);
  });
});

describe('regenerate', () => {
  const regenerate = (source: Buffer, prompt?: string) => ({
    model: 'sim-h3-regenerate',
    content: [...(prompt === undefined ? [] : [text(prompt)]), sourceVideo(source)],
    resolution: '480p',
    duration: 1,
  });

  it('derives the file from the source video bytes alone', async () => {
    const source = mp4(3);
    const first = await videoOf(await finished(regenerate(source)));
    expect(
      (await videoOf(await finished(regenerate(source, '[sim:task_seconds=0]')))).equals(first),
    ).toBe(true);
    expect((await videoOf(await finished(regenerate(mp4(4))))).equals(first)).toBe(false);
    expect(await inspect(first)).toMatchObject({ durationSeconds: 1, width: 170, height: 96 });
  });

  it('refuses a prompt, and anything but exactly one reference_video', async () => {
    expect((await submit(regenerate(mp4(3), 'make it blue'))).status).toBe(400);
    const none = await submit({
      model: 'sim-h3-regenerate',
      content: [text('[sim:task_seconds=0]')],
    });
    expect(none.body['error']).toMatchObject({ message: expect.stringMatching(/reference_video/) });
    const two = regenerate(mp4(3));
    two.content.push(sourceVideo(mp4(4)));
    expect((await submit(two)).status).toBe(400);
  });
});

describe('understand', () => {
  const understand = (source: Buffer, prompt: string, duration = 4) => ({
    model: 'sim-h3-understand',
    content: [text(prompt), sourceVideo(source)],
    duration,
  });

  it('answers a deterministic text about the video, with tokens of the prompt plus 10 per second asked', async () => {
    const source = await videoOf(
      await finished({
        model: 'sim-h3',
        content: [text('a red fox')],
        resolution: '480p',
        ratio: '9:16',
        duration: 2,
      }),
    );
    const task = await finished(understand(source, 'What happens?', 6));
    const answer = String((task['content'] as Json)['text']);
    expect(answer).toMatch(/^A 2-second video, 96x170, sha256 [0-9a-f]{12}; 6 seconds watched\./);
    const prompt = countTokens('What happens?') + 60;
    const completion = countTokens(answer);
    expect(task['usage']).toEqual({
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
    });
    expect(completion).toBeLessThan(1_000);
    expect(task).not.toHaveProperty('duration');
    expect((await read(`${TASKS}/${String(task['id'])}/video.mp4`)).status).toBe(404);
    const again = await finished(understand(source, 'What happens?', 6));
    expect((again['content'] as Json)['text']).toBe(answer);
  });

  it('refuses a source that is not an MP4, no source, and a duration outside 4 to 15', async () => {
    expect((await submit(understand(png(8, 8), 'what?'))).status).toBe(400);
    expect((await submit({ model: 'sim-h3-understand', content: [text('what?')] })).status).toBe(
      400,
    );
    expect((await submit(understand(mp4(3), 'what?', 3))).status).toBe(400);
    expect((await submit(understand(mp4(3), 'what?', 16))).status).toBe(400);
  });
});
