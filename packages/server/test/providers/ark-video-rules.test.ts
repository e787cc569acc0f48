import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  ARK_QUERY_RETENTION_MS,
  signedUrlExpiresAt,
} from '../../src/providers/ark/ark-service-rules.js';
import { ArkH3Tasks } from '../../src/providers/ark/h3-tasks.js';
import type { PollResult } from '../../src/providers/task-provider.js';
import { UpstreamFailure } from '../../src/providers/upstream-error.js';
import type { UpstreamClient } from '../../src/providers/upstream-http.js';

/**
 * Risk: Volcengine Ark reports a video's length as `duration` or, for a task created with
 * `frames`, as `frames` at `framespersecond` (one of the two, never both), deletes the video 24
 * hours after making it (its URL is pre-signed for that long) and answers a task for 7 days. If
 * the adapter read only `duration`, a frames-reported video would never be billed (or be
 * guessed); if it did not say when a result URL expires, the gateway would retry a download that
 * can never succeed; if it did not declare the query window, a task would be polled forever.
 * Recorded bodies in Ark's documented shape, no network.
 */

const ARK_BASE = 'https://ark.cn-beijing.volces.com/api/v3';
/** A result URL as Ark's documentation shows one (TOS pre-signed, 24 hours), signature cut. */
const SIGNED_URL =
  'https://ark-content-generation-cn-beijing.tos-cn-beijing.volces.com/doubao-seedance-1-0-pro/0217.mp4' +
  '?X-Tos-Algorithm=TOS4-HMAC-SHA256&X-Tos-Date=20250613T080120Z&X-Tos-Expires=86400&X-Tos-Signature=abc';
const SIGNED_EXPIRY = Date.UTC(2025, 5, 14, 8, 1, 20);

/** The adapter over an upstream answering every read with `json`. */
function adapterAnswering(json: unknown): ArkH3Tasks {
  const client: UpstreamClient = {
    postJson: () => Promise.reject(new Error('not used')),
    postStream: () => Promise.reject(new Error('not used')),
    getJson: () => Promise.resolve({ json, upstreamRequestId: 'req-1' }),
    getBinary: () => Promise.resolve({ body: Readable.from([]), mediaType: 'video/mp4', bytes: 0 }),
  };
  return new ArkH3Tasks(client, ARK_BASE, { lookup: false, timeoutMs: 1_000 });
}

/** A task in Ark's documented shape, succeeded with a signed video URL unless overridden. */
const arkTask = (fields: Record<string, unknown>) => ({
  id: 'cgt-20250613160030-2dvd7',
  model: 'doubao-seedance-1-0-pro-250528',
  status: 'succeeded',
  content: { video_url: SIGNED_URL },
  resolution: '720p',
  ratio: '16:9',
  usage: { completion_tokens: 108_900, total_tokens: 108_900 },
  created_at: 1_749_801_630,
  updated_at: 1_749_801_680,
  ...fields,
});

const poll = (fields: Record<string, unknown>): Promise<PollResult> =>
  adapterAnswering(arkTask(fields)).poll('cgt-20250613160030-2dvd7');

async function secondsOf(fields: Record<string, unknown>): Promise<number> {
  const result = await poll(fields);
  if (result.kind !== 'completed') throw new Error(`expected completed, got ${result.kind}`);
  return result.report.secondsDelivered;
}

describe('the length of an Ark video', () => {
  it('is the same seconds for the same video, reported as duration or as frames at its frame rate', async () => {
    expect(await secondsOf({ duration: 5, framespersecond: 24 })).toBe(5);
    expect(await secondsOf({ frames: 120, framespersecond: 24 })).toBe(5);
    expect(await secondsOf({ duration: 6, framespersecond: 16 })).toBe(6);
    expect(await secondsOf({ frames: 96, framespersecond: 16 })).toBe(6);
  });

  it("is a frames video's true length, whole seconds or not (Ark: 57 frames at 24 fps is 2.375 s)", async () => {
    expect(await secondsOf({ frames: 57, framespersecond: 24 })).toBe(2.375);
    expect(await secondsOf({ frames: 145, framespersecond: 24 })).toBeCloseTo(6.0417, 4);
  });

  it('is the smaller of two claims should both come (never billed above either)', async () => {
    expect(await secondsOf({ duration: 5, frames: 97, framespersecond: 24 })).toBeCloseTo(
      4.0417,
      4,
    );
    expect(await secondsOf({ duration: 4, frames: 121, framespersecond: 24 })).toBe(4);
  });

  it.each([
    ['frames without its frame rate', { frames: 120 }],
    ['neither duration nor frames', { framespersecond: 24 }],
    ['a frame rate of 0', { frames: 120, framespersecond: 0 }],
    ['fractional frames', { frames: 120.5, framespersecond: 24 }],
  ])('is never guessed: %s is an unverifiable body, read again later', async (_name, fields) => {
    const error = await poll(fields).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UpstreamFailure);
    expect((error as UpstreamFailure).certainty).toBe('unknown');
  });

  it('bills a billed failure on its frames as on its duration', async () => {
    const failed = (fields: Record<string, unknown>) =>
      poll({ status: 'failed', content: null, usage: { billed: true }, ...fields });
    for (const fields of [{ duration: 5 }, { frames: 120, framespersecond: 24 }])
      expect(await failed(fields)).toMatchObject({
        kind: 'failed',
        report: { secondsDelivered: 5, billedFailure: true },
      });
  });
});

describe("Ark's windows", () => {
  it('says when a pre-signed result URL expires, on the answer and on the kept URL alike', async () => {
    const result = await poll({ duration: 5 });
    if (result.kind !== 'completed') throw new Error('expected completed');
    expect(result.outputs[0]).toMatchObject({ url: SIGNED_URL, expiresAt: SIGNED_EXPIRY });
    const provider = adapterAnswering(arkTask({}));
    expect(provider.resultSource(SIGNED_URL).expiresAt).toBe(SIGNED_EXPIRY);
  });

  it('assumes no expiry for a URL that states none readable', async () => {
    const unsigned = `${ARK_BASE}/files/v.mp4`;
    const result = await poll({ duration: 5, content: { video_url: unsigned } });
    if (result.kind !== 'completed') throw new Error('expected completed');
    expect(result.outputs[0]?.expiresAt).toBeUndefined();
    const base = 'https://tos.example.com/v.mp4?';
    for (const query of [
      'X-Tos-Date=20251301T000000Z&X-Tos-Expires=86400',
      'X-Tos-Date=20250431T000000Z&X-Tos-Expires=86400',
      'X-Tos-Date=20250613T080120Z&X-Tos-Expires=1e5',
      'X-Tos-Date=20250613T080120Z&X-Tos-Expires=604801',
      'X-Tos-Date=2025-06-13T08:01:20Z&X-Tos-Expires=86400',
      'X-Tos-Expires=86400',
    ])
      expect(signedUrlExpiresAt(`${base}${query}`), query).toBeUndefined();
    expect(signedUrlExpiresAt(`${base}x-tos-date=20250613T080120Z&x-tos-expires=3600`)).toBe(
      Date.UTC(2025, 5, 13, 9, 1, 20),
    );
  });

  it('declares the 7-day query window, and no look-up by key', () => {
    const provider = adapterAnswering(arkTask({}));
    expect(provider.queryRetentionMs).toBe(ARK_QUERY_RETENTION_MS);
    expect(ARK_QUERY_RETENTION_MS).toBe(7 * 86_400_000);
    expect(provider.lookup).toBeUndefined();
  });
});
