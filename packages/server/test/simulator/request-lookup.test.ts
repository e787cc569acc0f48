import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';

/**
 * Risk: the reconciler charges what the request look-up says an upstream did, and releases what
 * it says it never received. If the simulator's look-up answered `completed` for a refused call,
 * or 404 for one it is still working on, the reconciler's tests would charge or release on a
 * lie. Everything here talks HTTP to a simulator started alone.
 */

let simulator: Simulator;
beforeAll(async () => {
  simulator = await startSimulator();
});
afterAll(async () => {
  await simulator.close();
});

function post(path: string, body: unknown, recordId: string, signal?: AbortSignal) {
  return fetch(`${simulator.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-tollgate-request-id': recordId },
    body: JSON.stringify(body),
    ...(signal === undefined ? {} : { signal }),
  });
}

async function lookUp(recordId: string) {
  const response = await fetch(`${simulator.url}/v1/tollgate/requests/${recordId}`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('the simulator request look-up', () => {
  it('reports a completed call with the usage its answer carried, per text protocol', async () => {
    const embedId = `req_${randomUUID()}`;
    const embedded = await post(
      '/v1/embeddings',
      { model: 'sim-embed', input: 'one two three' },
      embedId,
    );
    const embedUsage = ((await embedded.json()) as { usage: unknown }).usage;
    expect(await lookUp(embedId)).toEqual({
      status: 200,
      body: { object: 'tollgate.request', id: embedId, status: 'completed', usage: embedUsage },
    });

    const chatId = `req_${randomUUID()}`;
    const chatted = await post(
      '/v1/chat/completions',
      { model: 'sim-chat', messages: [{ role: 'user', content: 'hello there' }] },
      chatId,
    );
    const chatUsage = ((await chatted.json()) as { usage: unknown }).usage;
    expect((await lookUp(chatId)).body).toMatchObject({ status: 'completed', usage: chatUsage });

    const rerankId = `req_${randomUUID()}`;
    const reranked = await post(
      '/v1/rerank',
      { model: 'sim-rerank', query: 'cat', documents: ['a cat', 'a dog'] },
      rerankId,
    );
    const rerankUsage = ((await reranked.json()) as { usage: unknown }).usage;
    expect((await lookUp(rerankId)).body).toMatchObject({
      status: 'completed',
      usage: rerankUsage,
    });
  });

  it('reports a streamed chat as completed with its usage, even when the stream is cut', async () => {
    const id = `req_${randomUUID()}`;
    const streamed = await post(
      '/v1/chat/completions',
      {
        model: 'sim-chat',
        stream: true,
        messages: [{ role: 'user', content: 'many words to stream [sim:cut_after=2]' }],
      },
      id,
    );
    await streamed.text().catch(() => undefined);
    const { body } = await lookUp(id);
    expect(body['status']).toBe('completed');
    expect(body['usage']).toMatchObject({ prompt_tokens: expect.any(Number) as number });
  });

  it('reports a refused call as failed, a hanging one as in progress, and an unknown id as 404', async () => {
    const refused = `req_${randomUUID()}`;
    const answer = await post(
      '/v1/embeddings',
      { model: 'sim-embed', input: 'x [sim:fail=500]' },
      refused,
    );
    expect(answer.status).toBe(500);
    expect((await lookUp(refused)).body).toMatchObject({ status: 'failed', usage: null });

    const hanging = `req_${randomUUID()}`;
    const abort = new AbortController();
    const pending = post(
      '/v1/embeddings',
      { model: 'sim-embed', input: 'x [sim:hang]' },
      hanging,
      abort.signal,
    ).catch(() => undefined);
    let seen: Record<string, unknown> | undefined;
    for (let attempt = 0; attempt < 50 && seen?.['status'] !== 'in_progress'; attempt += 1) {
      const found = await lookUp(hanging);
      if (found.status === 200) seen = found.body;
      else await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(seen).toMatchObject({ status: 'in_progress', usage: null });
    abort.abort();
    await pending;

    const unknown = await lookUp(`req_${randomUUID()}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ error: { code: 'not_found' } });
  });

  it('remembers nothing for a call that did not name a record', async () => {
    const response = await fetch(`${simulator.url}/v1/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-embed', input: 'anonymous' }),
    });
    expect(response.status).toBe(200);
    expect((await lookUp('anonymous')).status).toBe(404);
  });
});
