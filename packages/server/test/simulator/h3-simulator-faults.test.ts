import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { H3Jobs } from '../../src/simulator/h3.js';
import { parseH3Body } from '../../src/simulator/h3-request.js';
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
import { mp3, mp4, png } from '../helpers/media.js';

/**
 * Risk: the H3 engine's failure, recovery and refusal paths are tested against `sim-h3`'s
 * faults. If a directive did not do what docs/simulator.md says, if a resubmission under one
 * Idempotency-Key made a second job or the look-up missed a job whose answer never came, or if
 * a malformed body were accepted (hiding an adapter's mistake), those paths would be untested.
 */

let simulator: Simulator;
let clock = Date.UTC(2026, 0, 1);
const { submit, read, finished } = h3Client(
  () => simulator,
  () => (clock += 60_000),
);

beforeAll(async () => {
  simulator = await startSimulator({ now: () => clock });
});
afterAll(() => simulator.close());

describe('directives', () => {
  const generate = (prompt: string, extra: Json = {}) => ({
    model: 'sim-h3',
    content: [text(prompt)],
    resolution: '480p',
    ...extra,
  });
  const lookUp = async (key: string) =>
    (await read(`${TASKS}?idempotency_key=${encodeURIComponent(key)}`)).body;

  it('fail answers the status and creates no job; delay waits; hang never answers', async () => {
    const failed = await submit(generate('x [sim:fail=503]'), 'fail-key');
    expect(failed.status).toBe(503);
    expect(await lookUp('fail-key')).toEqual({ items: [], total: 0 });
    const started = Date.now();
    expect((await submit(generate('x [sim:delay=200]'))).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    await expect(submit(generate('x [sim:hang]'), 'hang-key', 300)).rejects.toThrow();
    expect(await lookUp('hang-key')).toEqual({ items: [], total: 0 });
  });

  it('task=fail fails unbilled; task=fail_billed bills the seconds asked, or understand its tokens', async () => {
    const failed = await finished(generate('x [sim:task=fail]', { duration: 3 }));
    expect(failed).toMatchObject({
      status: 'failed',
      error: { code: 'generation_failed' },
      usage: { billed: false },
    });
    expect(failed).not.toHaveProperty('duration');
    expect((await read(`${TASKS}/${String(failed['id'])}/video.mp4`)).status).toBe(404);
    const billed = await finished(
      generate('x [sim:task=fail_billed] [sim:deliver_seconds=1]', { duration: 3 }),
    );
    expect(billed).toMatchObject({ status: 'failed', duration: 3, usage: { billed: true } });
    const understood = await finished({
      model: 'sim-h3-understand',
      content: [text('why? [sim:task=fail_billed]'), sourceVideo(mp4(3))],
      duration: 5,
    });
    expect(understood).toMatchObject({ status: 'failed', usage: { billed: true } });
    expect((understood['usage'] as Json)['prompt_tokens']).toBe(countTokens('why?') + 50);
  });

  it('task=unknown creates the job and never answers; the look-up and a replay find it', async () => {
    const body = generate('x [sim:task=unknown]');
    await expect(submit(body, 'unknown-key', 300)).rejects.toThrow();
    const found = await lookUp('unknown-key');
    expect(found['total']).toBe(1);
    const id = ((found['items'] as Json[])[0] ?? {})['id'];
    expect(id).toMatch(/^cgt-/);
    expect((await submit(body, 'unknown-key')).body).toEqual({ id });
  });

  it('task_seconds sets how long the job runs', async () => {
    const now = await submit(generate('x [sim:task_seconds=0]'));
    expect((await read(`${TASKS}/${String(now.body['id'])}`)).body['status']).toBe('succeeded');
    const slow = await submit(generate('x [sim:task_seconds=10]'));
    clock += 9_000;
    expect((await read(`${TASKS}/${String(slow.body['id'])}`)).body['status']).toBe('running');
    clock += 1_000;
    expect((await read(`${TASKS}/${String(slow.body['id'])}`)).body['status']).toBe('succeeded');
  });
});

describe('idempotency and bounds', () => {
  it('a replay under one key makes one job; another body under it is 409', async () => {
    const body = { model: 'sim-h3', content: [text('a kite')], duration: 2 };
    const first = await submit(body, 'replayed');
    expect((await submit(body, 'replayed')).body).toEqual(first.body);
    const found = await read(`${TASKS}?idempotency_key=replayed`);
    expect(found.body['total']).toBe(1);
    const conflict = await submit({ ...body, duration: 3 }, 'replayed');
    expect(conflict.status).toBe(409);
    expect(conflict.body['error']).toMatchObject({ code: 'idempotency_key_reused' });
  });

  const only = (...content: unknown[]) => ({ model: 'sim-h3', content });
  const media = (type: string, url: string, role?: string) => ({
    type,
    [type]: { url },
    ...(role === undefined ? {} : { role }),
  });
  const png8 = dataUri('image/png', png(8, 8));
  const withText = (extra: Json) => ({ ...only(text('x')), ...extra });
  it.each([
    ['no model', { content: [text('x')] }, /^model must be/],
    ['content not an array', { model: 'sim-h3', content: 'x' }, /^content must be an array/],
    ['no content items', only(), /^content must be an array of 1 to 16/],
    ['17 items', only(...Array.from({ length: 17 }, () => text('x'))), /of 1 to 16 items/],
    ['two text items', only(text('x'), text('y')), /at most one text item/],
    ['an unknown field', withText({ seed: 1 }), /unknown field seed/],
    ['an unknown item type', only({ type: 'file', file: {} }), /type must be text, image_url/],
    [
      'a remote URL',
      only(media('image_url', 'https://a.example/a.png', 'first_frame')),
      /data: URI/,
    ],
    ['a role of another type', only(media('image_url', png8, 'reference_video')), /role must be/],
    [
      'no role',
      only(media('audio_url', dataUri('audio/mpeg', mp3(2)))),
      /role must be reference_audio/,
    ],
    [
      'another media type',
      only(media('audio_url', dataUri('video/mp4', mp4(1)), 'reference_audio')),
      /must hold audio/,
    ],
    [
      'bad base64',
      only(media('image_url', 'data:image/png;base64,%%%=', 'reference_image')),
      /base64/,
    ],
    [
      'a last frame alone',
      only(media('image_url', png8, 'last_frame')),
      /last_frame needs a first_frame/,
    ],
    ['ratio 16x9', withText({ ratio: '16x9' }), /^ratio must be W:H/],
    ['ratio 0:1', withText({ ratio: '0:1' }), /^ratio must be W:H/],
    ['duration 0', withText({ duration: 0 }), /^duration must be an integer from 1 to 20/],
    ['duration 21', withText({ duration: 21 }), /^duration must be an integer from 1 to 20/],
    ['duration 2.5', withText({ duration: 2.5 }), /^duration must be an integer/],
    ['resolution 4K', withText({ resolution: '4K' }), /^resolution must be/],
    [
      'generate_audio "yes"',
      withText({ generate_audio: 'yes' }),
      /generate_audio must be a boolean/,
    ],
    ['an unknown directive', only(text('x [sim:nope]')), /unknown simulator directive/],
  ] as const)('refuses %s with 400 and a message naming it', async (_name, body, message) => {
    const answer = await submit(body);
    expect(answer.status).toBe(400);
    expect(answer.body['error']).toMatchObject({ code: 'invalid_request' });
    expect((answer.body['error'] as Json)['message']).toMatch(message);
  });

  it('keeps at most the job limit: full of unfinished jobs refuses, then evicts the oldest finished', () => {
    let now = 0;
    const jobs = new H3Jobs(() => now);
    const request = parseH3Body({ model: 'sim-h3', content: [text('x')] });
    const output = { kind: 'text', text: 'y', promptTokens: 1, completionTokens: 1 } as const;
    const first = jobs.create(request, output, 'oldest');
    for (let index = 1; index < SIMULATOR_LIMITS.videoJobs; index += 1)
      jobs.create(request, output, undefined);
    expect(jobs.create(request, output, undefined)).toBeUndefined();
    now += 1_000;
    expect(jobs.create(request, output, undefined)).toBeDefined();
    expect(jobs.get(first?.id ?? '')).toBeUndefined();
    expect(jobs.byIdempotencyKey('oldest')).toBeUndefined();
  });
});
