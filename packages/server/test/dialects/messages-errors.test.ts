import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';

/** sim-chat reading at most 2,000 bytes of text, so a context overflow is easy to reach. */
const config = testConfig({
  models: defaultConfig.models.map((model) =>
    model.id === 'sim-chat' ? { ...model, max_input_bytes: 2_000 } : model,
  ),
});

const ERROR_SHAPE = {
  type: 'error',
  error: { type: expect.any(String) as unknown, message: expect.any(String) as unknown },
  request_id: expect.stringMatching(/^req_/) as unknown,
};

/**
 * Risk: an error Anthropic's SDK or Claude Code cannot read (the spec's `{"error": {"code"}}`
 * reaching a client that looks for `{"type": "error"}`), a status changed on the way (a money
 * refusal turned 5xx or 429, which clients retry), a field named in chat's terms that the caller
 * never sent, a context overflow Claude Code does not recognise, or an error the SDK resends.
 */
describeEachDialect('Anthropic error answers of /v1/messages on $name', (dialect) => {
  let gateway: TestGateway;
  let key: string;
  beforeAll(async () => {
    gateway = await startGateway(dialect, { config });
    ({ key } = await gateway.account(1_000_000_000));
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  const send = (
    body: Record<string, unknown>,
    options: { key?: string; headers?: Record<string, string> } = {},
  ) =>
    gateway.call('POST', '/v1/messages', {
      key: options.key ?? key,
      body: {
        model: 'sim-chat',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'hi' }],
        ...body,
      },
      ...(options.headers === undefined ? {} : { headers: options.headers }),
    });
  const expectError = (
    response: Awaited<ReturnType<typeof send>>,
    status: number,
    type: string,
    message?: string | RegExp,
  ) => {
    expect(response.statusCode, response.body).toBe(status);
    const body = response.json<{ error: { type: string; message: string }; request_id: string }>();
    expect(body).toEqual(ERROR_SHAPE);
    expect(body.error.type).toBe(type);
    expect(body.request_id).toBe(response.headers['x-service-request-id']);
    if (message !== undefined) expect(body.error.message).toMatch(message);
  };

  it('400 invalid_request_error names the Anthropic field path', async () => {
    expectError(
      await send({
        messages: [
          { role: 'user', content: 'look' },
          { role: 'assistant', content: 'ok' },
          { role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'f' } }] },
        ],
      }),
      400,
      'invalid_request_error',
      /^messages\.2\.content\.0\.source/,
    );
    expectError(
      await send({ tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 3 }] }),
      400,
      'invalid_request_error',
      /^tools\.0\.type: only custom tools/,
    );
    expectError(await send({ top_k: 5 }), 400, 'invalid_request_error', /^top_k: is not carried/);
    expectError(await send({ container: 'c' }), 400, 'invalid_request_error', /^container/);
    expectError(await send({ mcp_servers: [] }), 400, 'invalid_request_error', /^mcp_servers/);
    expectError(await send({ surprise: true }), 400, 'invalid_request_error', /^surprise: /);
    // The chat rule (4 stop strings), named as the caller sent it.
    expectError(
      await send({ stop_sequences: ['a', 'b', 'c', 'd', 'e'] }),
      400,
      'invalid_request_error',
      /^stop_sequences: must be a string or up to 4 strings/,
    );
    expectError(
      await send({ max_tokens: 100_000 }),
      400,
      'invalid_request_error',
      /^max_tokens: must be at most 4096/,
    );
    // A URL image on a model without image URLs: chat's image part renamed to the block's source.
    expectError(
      await send({
        model: 'sim-vision',
        messages: [
          { role: 'user', content: 'first' },
          { role: 'assistant', content: 'second' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'see' },
              { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
            ],
          },
        ],
      }),
      400,
      'invalid_request_error',
      /^messages\.2\.content\.1\.source: image URLs are not enabled/,
    );
    // A tool result that answers no tool use: chat's continuation rule, on the caller's message.
    const orphan = await send({
      system: 'be brief',
      messages: [
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'x' }] },
      ],
    });
    expectError(orphan, 400, 'invalid_request_error', /messages\.0\.content\.0/);
    expect(orphan.headers['x-should-retry']).toBe('false');
  });

  it('401 authentication_error: a bad key, and two different keys in Bearer and x-api-key', async () => {
    expectError(await send({}, { key: 'tgk_nonsense' }), 401, 'authentication_error');
    const other = await gateway.account(1_000);
    expectError(
      await send({}, { headers: { 'x-api-key': other.key } }),
      401,
      'authentication_error',
      /different keys/,
    );
    const missing = await gateway.app.inject({
      method: 'POST',
      url: '/v1/messages',
      payload: { model: 'sim-chat', max_tokens: 10, messages: [] },
    });
    expectError(missing, 401, 'authentication_error');
  });

  it('404 not_found_error for a model the key may not call', async () => {
    expectError(await send({ model: 'claude-opus-9' }), 404, 'not_found_error', /does not exist/);
  });

  it('402 billing_error stays 402, is not to be retried, and charges nothing', async () => {
    const poor = await gateway.account(5);
    const refused = await send({}, { key: poor.key });
    expectError(refused, 402, 'billing_error');
    expect(refused.headers['x-should-retry']).toBe('false');
    expect(await gateway.balance(poor.accountId)).toMatchObject({ balance: 5, held: 0 });
  });

  it('a context overflow reads "prompt is too long: N tokens > M maximum"', async () => {
    const overflow = await send({ messages: [{ role: 'user', content: 'x'.repeat(5_000) }] });
    expectError(
      overflow,
      400,
      'invalid_request_error',
      /^prompt is too long: \d+ tokens > \d+ maximum$/,
    );
    const [tokens, maximum] = /(\d+) tokens > (\d+)/
      .exec(overflow.json<{ error: { message: string } }>().error.message)
      ?.slice(1)
      .map(Number) ?? [0, 0];
    expect(tokens).toBeGreaterThan(maximum ?? 0);
    expect(maximum).toBe(Math.floor(2_000 / 3));
  });

  it('a replayed error reads in Anthropic shape too', async () => {
    const idempotencyKey = randomUUID();
    const body = {
      model: 'sim-chat',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'fail now [sim:fail=500]' }],
    };
    const first = await gateway.call('POST', '/v1/messages', { key, idempotencyKey, body });
    expectError(first, 502, 'api_error');
    const replay = await gateway.call('POST', '/v1/messages', { key, idempotencyKey, body });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expectError(replay, 502, 'api_error');
    expect(replay.body).toBe(first.body);
  });
});
