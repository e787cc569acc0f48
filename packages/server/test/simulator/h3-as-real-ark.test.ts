import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { textItem as text, videoItem as sourceVideo, type Json } from '../helpers/h3-simulator.js';
import { mp4 } from '../helpers/media.js';

/**
 * Risk: the gateway's tests of an upstream with `dialect: ark` pass against a simulator that
 * still offers what real Volcengine Ark lacks — a look-up by idempotency key, an honoured
 * `Idempotency-Key`, understand tasks, billed failures — or that keeps tasks and result URLs
 * longer than Ark does (7 days, 24 hours). Then the gateway could rely on any of them and no
 * test would show it. Under `/dialect/ark/v1` every extension must be off; under `/v1` the
 * simulator's own routes keep them. Over HTTP, on a clock the test moves.
 */

let simulator: Simulator;
let clock = Date.UTC(2026, 0, 1);
const ARK = '/dialect/ark/v1/contents/generations/tasks';
const OWN = '/v1/contents/generations/tasks';
const HOUR_MS = 3_600_000;

beforeAll(async () => {
  simulator = await startSimulator({ now: () => clock });
});
afterAll(async () => {
  await simulator.close();
});

const generate = (prompt: string) => ({
  model: 'sim-h3',
  content: [text(prompt)],
  resolution: '480p',
  duration: 2,
});

async function post(path: string, body: unknown, key = 'the-same-key') {
  const response = await fetch(`${simulator.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Json };
}

async function get(path: string) {
  const response = await fetch(`${simulator.url}${path}`);
  return { status: response.status, body: (await response.json()) as Json };
}

/** Creates a job as real Ark, lets it finish, and reads it. */
async function finishedArkTask(prompt = 'a red fox [sim:task_seconds=1]'): Promise<Json> {
  const created = await post(ARK, generate(prompt), `key-${Math.random()}`);
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  clock += 60_000;
  const read = await get(`${ARK}/${String(created.body['id'])}`);
  expect(read.status).toBe(200);
  return read.body;
}

describe('the simulator as real Ark (dialect ark)', () => {
  it('does not honour Idempotency-Key: the same key and body make a second job', async () => {
    const first = await post(ARK, generate('twice [sim:task_seconds=1]'), 'one-key');
    const second = await post(ARK, generate('twice [sim:task_seconds=1]'), 'one-key');
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body['id']).not.toBe(first.body['id']);
    // The simulator's own routes answer the first job again.
    const own = await post(OWN, generate('twice [sim:task_seconds=1]'), 'own-key');
    expect((await post(OWN, generate('twice [sim:task_seconds=1]'), 'own-key')).body).toEqual(
      own.body,
    );
  });

  it('has no look-up by idempotency key; its task list filters by Ark ids, status and model', async () => {
    const lookUp = await get(`${ARK}?idempotency_key=one-key`);
    expect(lookUp.status).toBe(400);
    expect(JSON.stringify(lookUp.body)).toContain('idempotency_key is not a filter');
    expect((await get(`${OWN}?idempotency_key=own-key`)).body).toMatchObject({ total: 1 });

    const task = await finishedArkTask();
    const byId = await get(`${ARK}?filter.task_ids=${String(task['id'])}`);
    expect(byId.body).toMatchObject({ total: 1, items: [{ id: task['id'] }] });
    const succeeded = await get(`${ARK}?filter.status=succeeded&filter.model=sim-h3&page_size=500`);
    expect((succeeded.body['items'] as Json[]).map((item) => item['id'])).toContain(task['id']);
    expect((await get(`${ARK}?filter.model=another-model`)).body).toMatchObject({ total: 0 });
  });

  it('refuses the extensions Ark lacks: understand tasks and billed failures', async () => {
    const understand = await post(ARK, {
      model: 'sim-h3-understand',
      content: [text('what happens?'), sourceVideo(mp4(2))],
      duration: 4,
    });
    expect(understand.status).toBe(400);
    expect(JSON.stringify(understand.body)).toContain('no video understanding task');
    const billed = await post(ARK, generate('[sim:task=fail_billed]'), 'billed');
    expect(billed.status).toBe(400);
    expect(JSON.stringify(billed.body)).toContain('usage.billed');
  });

  it('shows a failure without usage.billed, and a video with its frame rate and a pre-signed 24-hour URL', async () => {
    const failed = await finishedArkTask('[sim:task=fail] [sim:task_seconds=1]');
    expect(failed).toMatchObject({ status: 'failed', usage: { completion_tokens: 0 } });
    expect(failed['usage']).not.toHaveProperty('billed');

    const task = await finishedArkTask();
    expect(task).toMatchObject({ status: 'succeeded', duration: 2, framespersecond: 4 });
    const url = new URL(String((task['content'] as Json)['video_url']));
    expect(url.pathname).toBe(`${ARK}/${String(task['id'])}/video.mp4`);
    expect(url.searchParams.get('X-Tos-Expires')).toBe('86400');
    expect(url.searchParams.get('X-Tos-Date')).toMatch(/^\d{8}T\d{6}Z$/);
    expect((await fetch(url)).status).toBe(200);
    // A lifetime written longer by the reader is refused: the signature covers it.
    const stretched = new URL(url);
    stretched.searchParams.set('X-Tos-Expires', '604800');
    expect((await fetch(stretched)).status).toBe(403);
    // Signed when the video was made, 59 s ago: valid until 24 hours from then, not a second on.
    clock += 24 * HOUR_MS - 60_000;
    expect((await fetch(url)).status).toBe(200);
    clock += 60_000;
    const expired = await fetch(url);
    expect(expired.status).toBe(403);
    expect(await expired.text()).toContain('Request has expired');
  });

  it("answers a task for 7 days after its creation, then 404 (and lists it no more); the simulator's own routes keep it", async () => {
    const created = await post(ARK, generate('kept a week [sim:task_seconds=1]'), 'a-week');
    const own = await post(OWN, generate('kept a week [sim:task_seconds=1]'), 'a-week-own');
    const id = String(created.body['id']);
    clock += 7 * 24 * HOUR_MS - 1_000;
    expect((await get(`${ARK}/${id}`)).status).toBe(200);
    clock += 1_000;
    expect((await get(`${ARK}/${id}`)).status).toBe(404);
    expect((await get(`${ARK}?filter.task_ids=${id}`)).body).toMatchObject({ total: 0 });
    expect((await get(`${OWN}/${String(own.body['id'])}`)).status).toBe(200);
  });
});
