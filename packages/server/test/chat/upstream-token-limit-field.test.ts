import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import { dialects } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';

const [sqlite] = dialects;

/** An OpenAI-compatible upstream that answers every chat call and keeps each body it got. */
async function recordingUpstream(): Promise<{
  server: Server;
  url: string;
  bodies: Record<string, unknown>[];
}> {
  const bodies: Record<string, unknown>[] = [];
  const server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    request.on('end', () => {
      const body = JSON.parse(text) as Record<string, unknown>;
      bodies.push(body);
      response.setHeader('content-type', 'application/json');
      response.end(
        JSON.stringify({
          id: `chatcmpl-${bodies.length}`,
          object: 'chat.completion',
          created: 1_700_000_000,
          model: body['model'],
          choices: [
            { index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' },
          ],
          usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}/v1`, bodies };
}

/**
 * The risk: the gateway invents an output limit the caller never sent, under a name the model
 * refuses — `"max_tokens": 100000` to `o4-mini`, which takes only `max_completion_tokens` — so
 * every call to OpenAI's reasoning models fails upstream. The limit goes under the model's
 * `token_limit_field`, and only when the caller gave one or the model says its upstream needs
 * one (`token_limit_required`); the hold counts the model's cap either way.
 */
describe('the output limit sent upstream', () => {
  let gateway: TestGateway;
  let key: string;
  let upstream: Awaited<ReturnType<typeof recordingUpstream>>;

  beforeAll(async () => {
    if (sqlite === undefined) throw new Error('no sqlite');
    upstream = await recordingUpstream();
    const simChat = defaultConfig.models.find((model) => model.id === 'sim-chat');
    if (simChat === undefined) throw new Error('the default configuration has sim-chat');
    const chatModel = (id: string, fields: object) => ({
      ...simChat,
      id,
      upstream: 'recording',
      max_output_tokens: 100_000,
      ...fields,
    });
    const config = testConfig({
      upstreams: {
        ...defaultConfig.upstreams,
        recording: { kind: 'openai', base_url: upstream.url },
      },
      models: [
        ...defaultConfig.models,
        chatModel('o4-mini', { token_limit_field: 'max_completion_tokens' }),
        chatModel('gpt-4o-mini', {}),
        chatModel('needs-a-limit', { token_limit_required: true }),
      ],
    });
    gateway = await startGateway(sqlite, { config });
    ({ key } = await gateway.account(1_000_000_000));
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
    await new Promise((resolve) => upstream.server.close(resolve));
  });

  /** The body the upstream got for one chat call of `model` with `fields`. */
  async function sentFor(model: string, fields: object): Promise<Record<string, unknown>> {
    const before = upstream.bodies.length;
    const response = await gateway.call('POST', '/v1/chat/completions', {
      key,
      body: { model, messages: [{ role: 'user', content: 'hi' }], ...fields },
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(upstream.bodies.length).toBe(before + 1);
    return upstream.bodies[before] ?? {};
  }

  const limitFields = (body: Record<string, unknown>) =>
    Object.fromEntries(
      Object.entries(body).filter(
        ([field]) => field === 'max_tokens' || field === 'max_completion_tokens',
      ),
    );

  it('no limit from the caller: none is invented (reasoning model or not)', async () => {
    expect(limitFields(await sentFor('o4-mini', {}))).toEqual({});
    expect(limitFields(await sentFor('gpt-4o-mini', {}))).toEqual({});
  });

  it("a caller's max_tokens or max_completion_tokens goes under the field the model accepts", async () => {
    expect(limitFields(await sentFor('o4-mini', { max_tokens: 300 }))).toEqual({
      max_completion_tokens: 300,
    });
    expect(limitFields(await sentFor('o4-mini', { max_completion_tokens: 200 }))).toEqual({
      max_completion_tokens: 200,
    });
    expect(limitFields(await sentFor('gpt-4o-mini', { max_completion_tokens: 200 }))).toEqual({
      max_tokens: 200,
    });
    expect(limitFields(await sentFor('gpt-4o-mini', { max_tokens: 300 }))).toEqual({
      max_tokens: 300,
    });
  });

  it('a model whose upstream needs a limit gets its cap when the caller gives none', async () => {
    expect(limitFields(await sentFor('needs-a-limit', {}))).toEqual({ max_tokens: 100_000 });
    expect(limitFields(await sentFor('needs-a-limit', { max_tokens: 50 }))).toEqual({
      max_tokens: 50,
    });
  });

  it('the hold still counts the whole output cap when no limit is sent', async () => {
    const quote = await gateway.call('POST', '/v1/chat/completions', {
      key,
      body: { model: 'o4-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 100 },
    });
    expect(quote.statusCode).toBe(200);
    const records = await gateway.services.store.db
      .selectFrom('requests')
      .select(['reserve_amount', 'created_at', 'id'])
      .where('model', '=', 'o4-mini')
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    const holds = records.map((record) => record.reserve_amount ?? 0);
    // The first o4-mini call sent no limit and held the 100,000-token cap; this one held 100.
    expect(holds[0]).toBe(Math.max(...holds));
    expect(holds[holds.length - 1]).toBeLessThan(holds[0] ?? 0);
  });
});
