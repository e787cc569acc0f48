import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mp4Info } from '../../src/assets/mp4-duration.js';
import { upstreamSchema } from '../../src/config/schema.js';
import { ArkH3Tasks } from '../../src/providers/ark/h3-tasks.js';
import type { H3TaskInput, PollResult, TaskInput } from '../../src/providers/task-provider.js';
import { UpstreamFailure } from '../../src/providers/upstream-error.js';
import { UpstreamHttp, type UpstreamClient } from '../../src/providers/upstream-http.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { countTokens } from '../../src/simulator/tokens.js';
import { mp3, mp4, png } from '../helpers/media.js';

/**
 * Risk: the H3 engine bills and stores what this adapter reports. If it sent references in the
 * wrong items or roles, misread a billed failure as free (or a free one as billed), lost an
 * understand task's tokens, or could not find a submission whose answer never came, callers
 * would be charged wrongly. Tested against the real simulator through an UpstreamHttp pool;
 * what the simulator never answers is in ark-h3-recorded-bodies.test.ts.
 */

let simulator: Simulator;
let pool: UpstreamHttp;
let directory: string;
let clock = Date.UTC(2026, 0, 1);
let keys = 0;
/** Every POST the adapter made: path, body, headers. */
const sent: { path: string; body: unknown; headers: unknown }[] = [];

beforeAll(async () => {
  simulator = await startSimulator({ now: () => clock });
  const config = upstreamSchema.parse({
    kind: 'simulator',
    timeouts: { connect_ms: 1_000, first_byte_ms: 1_000, idle_ms: 5_000 },
  });
  pool = new UpstreamHttp(`${simulator.url}/v1`, config, undefined);
  directory = await mkdtemp(join(tmpdir(), 'ark-h3-'));
});
afterAll(async () => {
  await pool.close();
  await simulator.close();
  await rm(directory, { recursive: true, force: true });
});

/** The adapter over the pool, recording every submission it sends. */
function adapter(lookup = true): ArkH3Tasks {
  const http = pool.for({ accountId: 'account-1' });
  const recording: UpstreamClient = {
    ...http,
    postJson: (path, body, signal, headers) => {
      sent.push({ path, body, headers });
      return http.postJson(path, body, signal, headers);
    },
  };
  return new ArkH3Tasks(recording, `${simulator.url}/v1`, { lookup, timeoutMs: 5_000 });
}

function h3(overrides: Partial<H3TaskInput> = {}): H3TaskInput {
  return {
    kind: 'h3',
    action: 'generate',
    upstreamModel: 'sim-h3',
    prompt: 'a red fox [sim:task_seconds=1]',
    resolution: '480p',
    ratio: '16:9',
    duration: 2,
    generateAudio: false,
    watermark: false,
    references: [],
    ...overrides,
  };
}

const newKey = () => `task-${++keys}`;

async function submitted(provider: ArkH3Tasks, input: H3TaskInput): Promise<string> {
  const result = await provider.submit(input, newKey());
  if (result.kind !== 'accepted') throw new Error('expected an accepted submission');
  return result.upstreamTaskId;
}

/** Submits, moves the simulator's clock past the job's end, and polls once. */
async function outcome(input: H3TaskInput): Promise<PollResult> {
  const provider = adapter();
  const id = await submitted(provider, input);
  clock += 60_000;
  return provider.poll(id);
}

async function bytesOf(body: Readable): Promise<Buffer> {
  return Buffer.concat((await body.toArray()) as Buffer[]);
}

describe('submission', () => {
  it('sends the prompt, then each reference as a data URI in its item type and role, in order', async () => {
    const frame = png(8, 8);
    const video = mp4(3);
    const audio = mp3(4);
    const key = newKey();
    const result = await adapter().submit(
      h3({
        generateAudio: true,
        references: [
          { role: 'first_frame', mediaType: 'image/png', bytes: frame },
          { role: 'reference_audio', mediaType: 'audio/mpeg', bytes: audio },
          { role: 'reference_video', mediaType: 'video/mp4', bytes: video },
          { role: 'reference_image', mediaType: 'image/png', bytes: frame },
        ],
      }),
      key,
    );
    expect(result).toEqual({ kind: 'accepted', upstreamTaskId: expect.stringMatching(/^cgt-/) });
    const uri = (type: string, bytes: Buffer) => `data:${type};base64,${bytes.toString('base64')}`;
    expect(sent.at(-1)).toEqual({
      path: '/contents/generations/tasks',
      headers: { 'idempotency-key': key },
      body: {
        model: 'sim-h3',
        content: [
          { type: 'text', text: 'a red fox [sim:task_seconds=1]' },
          { type: 'image_url', image_url: { url: uri('image/png', frame) }, role: 'first_frame' },
          {
            type: 'audio_url',
            audio_url: { url: uri('audio/mpeg', audio) },
            role: 'reference_audio',
          },
          {
            type: 'video_url',
            video_url: { url: uri('video/mp4', video) },
            role: 'reference_video',
          },
          {
            type: 'image_url',
            image_url: { url: uri('image/png', frame) },
            role: 'reference_image',
          },
        ],
        resolution: '480p',
        ratio: '16:9',
        duration: 2,
        generate_audio: true,
        watermark: false,
      },
    });
  });

  it('leaves out the text item without a prompt, and resolution and ratio when not given', async () => {
    const source = mp4(3);
    await adapter().submit(
      h3({
        action: 'understand',
        upstreamModel: 'sim-h3-understand',
        prompt: undefined,
        resolution: undefined,
        ratio: undefined,
        duration: 4,
        references: [{ role: 'reference_video', mediaType: 'video/mp4', bytes: source }],
      }),
      newKey(),
    );
    const body = sent.at(-1)?.body as Record<string, unknown>;
    expect(Object.keys(body)).toEqual([
      'model',
      'content',
      'duration',
      'generate_audio',
      'watermark',
    ]);
    expect(body['content']).toEqual([
      expect.objectContaining({ type: 'video_url', role: 'reference_video' }),
    ]);
  });

  it('answers a replay under one key with the same upstream task', async () => {
    const provider = adapter();
    const key = newKey();
    const first = await provider.submit(h3(), key);
    expect(await provider.submit(h3(), key)).toEqual(first);
  });

  it('classifies a refusal as failed and refuses a task that is not H3 before sending', async () => {
    const refused = await adapter()
      .submit(h3({ prompt: 'x [sim:fail=400]' }), newKey())
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(UpstreamFailure);
    expect((refused as UpstreamFailure).certainty).toBe('failed');
    const before = sent.length;
    const video: TaskInput = {
      kind: 'video',
      upstreamModel: 'sim-video',
      prompt: 'x',
      size: '720x1280',
      n: 1,
      quality: undefined,
      seconds: 4,
      generateAudio: false,
      references: [],
    };
    await expect(adapter().submit(video, newKey())).rejects.toThrow(/H3 tasks, not video/);
    expect(sent.length).toBe(before);
  });

  it('is refused as failed, not lost as unknown, when the references pass the body limit', async () => {
    const bytes = Buffer.alloc(25 * 1024 * 1024, 1); // 33 MiB once base64-encoded
    const refused = await adapter()
      .submit(
        h3({ references: [{ role: 'reference_image', mediaType: 'image/png', bytes }] }),
        newKey(),
      )
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ certainty: 'failed', detail: 'upstream status 413' });
  });

  it('finds a submission whose answer never came by its key, only when the look-up is offered', async () => {
    const provider = adapter();
    const key = newKey();
    const lost = await provider
      .submit(h3({ prompt: 'x [sim:task=unknown]' }), key)
      .catch((error: unknown) => error);
    expect((lost as UpstreamFailure).certainty).toBe('unknown');
    const id = await provider.lookup?.(key);
    expect(id).toMatch(/^cgt-/);
    expect(await provider.poll(id ?? '')).toEqual({ kind: 'pending', progress: null });
    expect(await provider.lookup?.('never-sent')).toBeNull();
    expect(adapter(false).lookup).toBeUndefined();
  });
});

describe('poll outcomes from the simulator', () => {
  it('is pending until the job ends, then delivers the MP4 with the seconds reported', async () => {
    const provider = adapter();
    const id = await submitted(provider, h3({ prompt: 'a slow boat [sim:deliver_seconds=1]' }));
    expect(await provider.poll(id)).toEqual({ kind: 'pending', progress: null });
    clock += 60_000;
    const result = await provider.poll(id);
    if (result.kind !== 'completed') throw new Error(`expected completed, got ${result.kind}`);
    expect(result.report).toEqual({
      imagesDelivered: 0,
      secondsDelivered: 1,
      billedFailure: false,
    });
    expect(result.text).toBeUndefined();
    expect(result.outputs).toHaveLength(1);
    const opened = await result.outputs[0]?.open();
    expect(opened?.mediaType).toBe('video/mp4');
    const file = join(directory, 'delivered.mp4');
    await writeFile(file, await bytesOf(opened?.body ?? Readable.from([])));
    expect(await mp4Info(file)).toEqual({ durationSeconds: 1, width: 170, height: 96 });
  });

  it('reports an unbilled failure as nothing delivered, a billed one as the seconds billed', async () => {
    expect(await outcome(h3({ prompt: 'x [sim:task=fail]' }))).toEqual({
      kind: 'failed',
      code: 'generation_failed',
      message: 'simulated generation failure',
      report: { imagesDelivered: 0, secondsDelivered: 0, billedFailure: false },
    });
    const billed = await outcome(h3({ prompt: 'x [sim:task=fail_billed]', duration: 4 }));
    expect(billed).toEqual({
      kind: 'failed',
      code: 'generation_failed',
      message: 'simulated generation failure (billed)',
      report: { imagesDelivered: 0, secondsDelivered: 4, billedFailure: true },
    });
  });

  it('returns understand text and its tokens, and bills a failed one by its tokens', async () => {
    const understand = (prompt: string) =>
      h3({
        action: 'understand',
        upstreamModel: 'sim-h3-understand',
        prompt,
        resolution: undefined,
        ratio: undefined,
        duration: 5,
        references: [{ role: 'reference_video', mediaType: 'video/mp4', bytes: mp4(3) }],
      });
    const result = await outcome(understand('What happens?'));
    if (result.kind !== 'completed') throw new Error(`expected completed, got ${result.kind}`);
    expect(result.outputs).toEqual([]);
    expect(result.text).toMatch(/^A 3-second video, of unknown size/);
    expect(result.report).toEqual({
      imagesDelivered: 0,
      secondsDelivered: 0,
      billedFailure: false,
      tokens: { input: countTokens('What happens?') + 50, output: countTokens(result.text ?? '') },
    });
    const failed = await outcome(understand('Why? [sim:task=fail_billed]'));
    expect(failed).toMatchObject({
      kind: 'failed',
      report: {
        secondsDelivered: 0,
        billedFailure: true,
        tokens: { input: countTokens('Why?') + 50 },
      },
    });
  });
});
