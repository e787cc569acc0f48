import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MAX_MESSAGES } from '../../src/chat/validate-messages.js';
import { MAX_JSON_ITEMS } from '../../src/http/plugins/json-body.js';
import { defaultConfig } from '../../src/config/default-config.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';
import { png } from '../helpers/media.js';

/**
 * Risks: chat ignored the model's `max_input_bytes` (3.5 MB of text accepted where embeddings
 * refuse 1 MB), and a request of 125,000 tiny messages held the event loop for seconds. Chat
 * now applies the same input rule as embeddings (same wording, its own field) and takes at
 * most MAX_MESSAGES messages; images do not count as text (they have their own caps). Any JSON
 * body holds at most MAX_JSON_ITEMS items, whatever their shape (the work per request grows
 * with them, all of it synchronous on the event loop).
 */
const MAX_INPUT_BYTES = 10_000;
const config = testConfig({
  // The production default body limit, so the 125,000-message body reaches the JSON parser.
  limits: { ...testConfig().limits, body_bytes: 4 * 1024 * 1024 },
  models: defaultConfig.models.map((model) =>
    ['sim-chat', 'sim-embed'].includes(model.id)
      ? { ...model, max_input_bytes: MAX_INPUT_BYTES }
      : model.id === 'sim-vision'
        ? { ...model, max_input_bytes: 64 }
        : model,
  ),
});
const user = (content: unknown) => ({ role: 'user', content });

describeEachDialect('chat input bounds on $name', (dialect) => {
  let gateway: TestGateway;
  let key: string;
  let accountId: string;
  beforeAll(async () => {
    gateway = await startGateway(dialect, { config });
    ({ key, accountId } = await gateway.account(1_000_000_000));
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  /** Posts `body`; on a 4xx, checks that nothing was recorded and no money moved. */
  async function post(url: string, body: unknown) {
    const before = await gateway.balance(accountId);
    const idempotencyKey = randomUUID();
    const response = await gateway.call('POST', url, { key, body, idempotencyKey });
    if (response.statusCode >= 400) {
      const record = await gateway.call('GET', `/v1/requests?idempotency_key=${idempotencyKey}`, {
        key,
      });
      expect(record.statusCode).toBe(404);
      expect(await gateway.balance(accountId)).toEqual(before);
    }
    return response;
  }
  const errorOf = (response: { json: <T>() => T }) =>
    response.json<{ error: { code: string; param: string; message: string } }>().error;

  it('refuses chat text above max_input_bytes with the rule and wording embeddings use', async () => {
    const text = 'x'.repeat(MAX_INPUT_BYTES + 1);
    const chat = await post('/v1/chat/completions', {
      model: 'sim-chat',
      messages: [user(text)],
    });
    const embeddings = await post('/v1/embeddings', { model: 'sim-embed', input: text });
    expect(chat.statusCode).toBe(400);
    expect(embeddings.statusCode).toBe(400);
    expect(errorOf(chat)).toMatchObject({ code: 'INVALID_INPUT', param: 'messages' });
    expect(errorOf(embeddings)).toMatchObject({ code: 'INVALID_INPUT', param: 'input' });
    const wording = (message: string) => message.replace(/^\w+: /, '').replace(/sim-\w+/, 'M');
    expect(wording(errorOf(chat).message)).toBe(wording(errorOf(embeddings).message));
    expect(errorOf(chat).message).toContain(`is larger than ${MAX_INPUT_BYTES} bytes`);
  });

  it('counts every text the model reads: all messages, tool calls and tool definitions', async () => {
    const third = 'y'.repeat(Math.ceil(MAX_INPUT_BYTES / 3));
    const split = await post('/v1/chat/completions', {
      model: 'sim-chat',
      messages: [user(third), { role: 'assistant', content: third }, user(third + third)],
    });
    expect(split.statusCode).toBe(400);
    expect(errorOf(split).param).toBe('messages');
    const inTools = await post('/v1/chat/completions', {
      model: 'sim-chat',
      messages: [user('hello')],
      tools: [
        { type: 'function', function: { name: 'lookup', description: third + third + third } },
      ],
    });
    expect(inTools.statusCode).toBe(400);
    expect(errorOf(inTools).param).toBe('messages');
  });

  it('accepts text of exactly max_input_bytes', async () => {
    const response = await post('/v1/chat/completions', {
      model: 'sim-chat',
      messages: [user('z'.repeat(MAX_INPUT_BYTES))],
      max_tokens: 5,
    });
    expect(response.statusCode).toBe(200);
  });

  it('does not count image data URIs as text (they have their own caps)', async () => {
    const url = `data:image/png;base64,${png(32, 32).toString('base64')}`;
    expect(url.length).toBeGreaterThan(64);
    const response = await post('/v1/chat/completions', {
      model: 'sim-vision',
      messages: [
        user([
          { type: 'text', text: 'what?' },
          { type: 'image_url', image_url: { url } },
        ]),
      ],
      max_tokens: 20,
    });
    expect(response.statusCode).toBe(200);
  });

  it(`refuses more than ${MAX_MESSAGES} messages, naming messages`, async () => {
    const response = await post('/v1/chat/completions', {
      model: 'sim-chat',
      messages: Array.from({ length: MAX_MESSAGES + 1 }, () => user('hi')),
    });
    expect(response.statusCode).toBe(400);
    expect(errorOf(response)).toMatchObject({ code: 'INVALID_INPUT', param: 'messages' });
    expect(errorOf(response).message).toContain(`at most ${MAX_MESSAGES}`);
  });

  it(`accepts ${MAX_MESSAGES} messages`, async () => {
    const response = await post('/v1/chat/completions', {
      model: 'sim-chat',
      messages: Array.from({ length: MAX_MESSAGES }, () => user('hi')),
      max_tokens: 5,
    });
    expect(response.statusCode).toBe(200);
  });

  it(`refuses a body of more than ${MAX_JSON_ITEMS} JSON items before parsing it`, async () => {
    // 200 KB: small in bytes, yet more items than any real request needs.
    const response = await post('/v1/chat/completions', {
      model: 'sim-chat',
      messages: [user(new Array<number>(MAX_JSON_ITEMS + 1).fill(0))],
    });
    expect(response.statusCode).toBe(400);
    expect(errorOf(response)).toMatchObject({ code: 'INVALID_INPUT', param: 'messages' });
    expect(errorOf(response).message).toContain(`more than ${MAX_JSON_ITEMS} JSON items`);
  });

  it('refuses the reported 125,000 tiny messages, naming messages, before parsing them', async () => {
    const response = await post('/v1/chat/completions', {
      model: 'sim-chat',
      messages: Array.from({ length: 125_000 }, () => user('x')),
    });
    expect(response.statusCode).toBe(400);
    expect(errorOf(response)).toMatchObject({ code: 'INVALID_INPUT', param: 'messages' });
  });
});
