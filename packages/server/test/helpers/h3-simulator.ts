import { expect } from 'vitest';
import type { Simulator } from '../../src/simulator/server.js';

/** Talking to the simulator's `sim-h3` routes over HTTP, for the tests of it and of its adapter. */

export type Json = Record<string, unknown>;
export const H3_TASKS = '/v1/contents/generations/tasks';

export const textItem = (value: string) => ({ type: 'text', text: value });
export const dataUri = (mediaType: string, bytes: Buffer) =>
  `data:${mediaType};base64,${bytes.toString('base64')}`;
export const videoItem = (bytes: Buffer) => ({
  type: 'video_url',
  video_url: { url: dataUri('video/mp4', bytes) },
  role: 'reference_video',
});

/**
 * A client of one simulator. `finishAll` moves the simulator's clock past every job's end; each
 * submission gets a fresh Idempotency-Key unless one is given.
 */
export function h3Client(simulator: () => Simulator, finishAll: () => void) {
  let keys = 0;

  async function submit(body: unknown, key = `key-${++keys}`, timeoutMs = 10_000) {
    const response = await fetch(`${simulator().url}${H3_TASKS}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { status: response.status, body: (await response.json()) as Json };
  }

  async function read(path: string) {
    const response = await fetch(`${simulator().url}${path}`);
    return { status: response.status, body: (await response.json()) as Json };
  }

  /** Submits, lets every job finish, and reads the task. */
  async function finished(body: unknown, key?: string): Promise<Json> {
    const submitted = await submit(body, key);
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
    finishAll();
    return (await read(`${H3_TASKS}/${String(submitted.body['id'])}`)).body;
  }

  function download(task: Json, range?: string): Promise<Response> {
    const url = (task['content'] as Json)['video_url'] as string;
    return fetch(url, range === undefined ? {} : { headers: { range } });
  }

  /** The task's video file (200, `video/mp4`). */
  async function videoOf(task: Json): Promise<Buffer> {
    const response = await download(task);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('video/mp4');
    return Buffer.from(await response.arrayBuffer());
  }

  return { submit, read, finished, download, videoOf };
}
