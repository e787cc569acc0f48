import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';
import { defaultConfig } from '../../src/config/default-config.js';

const [sqlite] = dialects;
const png = (width: number, height: number) => {
  const header = Buffer.from([
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52,
  ]);
  const size = Buffer.alloc(8);
  size.writeUInt32BE(width, 0);
  size.writeUInt32BE(height, 4);
  return Buffer.concat([header, size, Buffer.alloc(20)]);
};
const jpeg = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(40)]);
const gif = Buffer.concat([Buffer.from('GIF89a', 'latin1'), Buffer.alloc(20)]);
const webp = Buffer.concat([
  Buffer.from('RIFF', 'latin1'),
  Buffer.alloc(4),
  Buffer.from('WEBP', 'latin1'),
  Buffer.alloc(20),
]);
const dataUri = (type: string, bytes: Buffer) => `data:${type};base64,${bytes.toString('base64')}`;
const image = (url: string) => ({ type: 'image_url', image_url: { url } });
const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }];

describe('chat rules: every 4xx with its status and code, charging nothing', () => {
  let gateway: TestGateway;
  let key: string;
  let accountId: string;
  let restrictedKey: string;
  beforeAll(async () => {
    if (sqlite === undefined) throw new Error('no sqlite');
    gateway = await startGateway(sqlite, { config: testConfig({ models: defaultConfig.models }) });
    ({ key, accountId } = await gateway.account(1_000_000_000));
    restrictedKey = (await gateway.newKey(accountId, { models: ['sim-embed'] })).key;
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  const post = async (body: Record<string, unknown>, withKey = key) => {
    const before = await gateway.balance(accountId);
    const response = await gateway.call('POST', '/v1/chat/completions', { key: withKey, body });
    if (response.statusCode >= 400) expect(await gateway.balance(accountId)).toEqual(before);
    return response;
  };
  const user = (content: unknown) => [{ role: 'user', content }];

  it.each([
    ['no messages', { model: 'sim-chat', messages: [] }, 400, 'INVALID_INPUT', 'messages'],
    [
      'an unknown role',
      { model: 'sim-chat', messages: [{ role: 'robot', content: 'x' }] },
      400,
      'INVALID_INPUT',
      'messages.0.role',
    ],
    [
      'a user message without content',
      { model: 'sim-chat', messages: [{ role: 'user' }] },
      400,
      'INVALID_INPUT',
      'messages.0.content',
    ],
    [
      'an unknown content part',
      { model: 'sim-chat', messages: user([{ type: 'audio', audio: {} }]) },
      400,
      'INVALID_INPUT',
      'messages.0.content.0.type',
    ],
    [
      'an image in a system message',
      {
        model: 'sim-vision',
        messages: [
          { role: 'system', content: [image(dataUri('image/png', png(1, 1)))] },
          { role: 'user', content: 'x' },
        ],
      },
      400,
      'INVALID_INPUT',
      'messages.0.content.0.type',
    ],
    [
      'an unknown top-level field',
      { model: 'sim-chat', messages: user('x'), temprature: 1 },
      400,
      'INVALID_INPUT',
      'temprature',
    ],
    [
      'temperature out of range',
      { model: 'sim-chat', messages: user('x'), temperature: 3 },
      400,
      'INVALID_CHAT_SETTINGS',
      'temperature',
    ],
    [
      'n above 1',
      { model: 'sim-chat', messages: user('x'), n: 2 },
      400,
      'INVALID_CHAT_SETTINGS',
      'n',
    ],
    [
      'max_tokens above the model cap',
      { model: 'sim-chat', messages: user('x'), max_tokens: 100_000 },
      400,
      'INVALID_CHAT_SETTINGS',
      'max_tokens',
    ],
    [
      'max_tokens and max_completion_tokens that differ',
      { model: 'sim-chat', messages: user('x'), max_tokens: 5, max_completion_tokens: 6 },
      400,
      'INVALID_CHAT_SETTINGS',
      'max_completion_tokens',
    ],
    [
      'stream_options without stream',
      { model: 'sim-chat', messages: user('x'), stream_options: { include_usage: true } },
      400,
      'INVALID_CHAT_SETTINGS',
      'stream_options',
    ],
    [
      'tool_choice naming an unknown tool',
      {
        model: 'sim-chat',
        messages: user('x'),
        tools,
        tool_choice: { type: 'function', function: { name: 'other' } },
      },
      400,
      'INVALID_CHAT_SETTINGS',
      'tool_choice',
    ],
    [
      'a bad tool name',
      {
        model: 'sim-chat',
        messages: user('x'),
        tools: [{ type: 'function', function: { name: 'has space' } }],
      },
      400,
      'INVALID_INPUT',
      'tools.0.function.name',
    ],
    [
      'a bad response_format',
      { model: 'sim-chat', messages: user('x'), response_format: { type: 'yaml' } },
      400,
      'INVALID_INPUT',
      'response_format.type',
    ],
    [
      'a tool call without its tool message',
      {
        model: 'sim-chat',
        tools,
        messages: [
          { role: 'user', content: 'x' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{}' } },
            ],
          },
          { role: 'user', content: 'next' },
        ],
      },
      400,
      'INVALID_FUNCTION_TOOLS',
      'messages.1.tool_calls',
    ],
    [
      'a tool message that answers no call',
      {
        model: 'sim-chat',
        tools,
        messages: [
          { role: 'user', content: 'x' },
          { role: 'tool', tool_call_id: 'c9', content: 'r' },
        ],
      },
      400,
      'INVALID_FUNCTION_TOOLS',
      'messages.1.tool_call_id',
    ],
    [
      'two tool messages for one call',
      {
        model: 'sim-chat',
        tools,
        messages: [
          { role: 'user', content: 'x' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'c1', content: 'a' },
          { role: 'tool', tool_call_id: 'c1', content: 'b' },
        ],
      },
      400,
      'INVALID_FUNCTION_TOOLS',
      'messages.3.tool_call_id',
    ],
    [
      'a feature the model never offers (images on sim-chat)',
      { model: 'sim-chat', messages: user([image(dataUri('image/png', png(1, 1)))]) },
      400,
      'UNSUPPORTED_CAPABILITY',
      'image_input',
    ],
    [
      'offered features that are not enabled together',
      {
        model: 'sim-chat',
        messages: user('x'),
        stream: true,
        tools,
        response_format: { type: 'json_object' },
      },
      403,
      'NATIVE_MODE_UNVERIFIED',
      undefined,
    ],
    [
      'a model this key may not call',
      { model: 'sim-chat', messages: user('x'), __restricted: true },
      404,
      'MODEL_NOT_FOUND',
      'model',
    ],
    [
      'an unknown model',
      { model: 'gpt-nothing', messages: user('x') },
      404,
      'MODEL_NOT_FOUND',
      'model',
    ],
    [
      'an embeddings model',
      { model: 'sim-embed', messages: user('x') },
      404,
      'MODEL_NOT_FOUND',
      'model',
    ],
    [
      'an image URL where URLs are not enabled',
      { model: 'sim-vision', messages: user([image('https://example.com/cat.png')]) },
      400,
      'INVALID_INPUT',
      'messages.0.content.0.image_url.url',
    ],
    [
      'an http (not https) image URL',
      { model: 'sim-vision', messages: user([image('http://example.com/cat.png')]) },
      400,
      'INVALID_INPUT',
      'messages.0.content.0.image_url.url',
    ],
  ])('refuses %s', async (_name, body, status, code, param) => {
    const { __restricted: restricted, ...rest } = body as Record<string, unknown>;
    const response = await post(rest, restricted === true ? restrictedKey : key);
    expect(response.statusCode).toBe(status);
    expect(response.json()).toMatchObject({
      error: { code, ...(param === undefined ? {} : { param }) },
    });
  });

  it('accepts images and video on the vision model', async () => {
    const response = await post({
      model: 'sim-vision',
      messages: user([
        { type: 'text', text: 'what is this' },
        image(dataUri('image/png', png(4, 3))),
        { type: 'video_url', video_url: { url: 'https://example.com/v.mp4' } },
      ]),
    });
    expect(response.statusCode).toBe(200);
    expect(
      response.json<{ choices: { message: { content: string } }[] }>().choices[0]?.message.content,
    ).toContain('1 image(s)');
  });

  describe('the OCR input matrix', () => {
    it.each([
      ['a PNG', [image(dataUri('image/png', png(640, 480)))], 200, /640x480/],
      ['a JPEG', [image(dataUri('image/jpeg', jpeg))], 200, /OCR text/],
      ['a GIF', [image(dataUri('image/gif', gif))], 400, /PNG or JPEG only/],
      ['a WebP', [image(dataUri('image/webp', webp))], 400, /PNG or JPEG only/],
      [
        'two images',
        [image(dataUri('image/png', png(1, 1))), image(dataUri('image/png', png(1, 1)))],
        400,
        /exactly one image; this request has 2/,
      ],
      [
        'no image',
        [{ type: 'text', text: 'read this' }],
        400,
        /exactly one image; this request has 0/,
      ],
      [
        'a URL instead of a data URI',
        [image('https://example.com/scan.png')],
        400,
        /as a data URI/,
      ],
      [
        'bytes that do not match the label',
        [image(dataUri('image/png', jpeg))],
        400,
        /says image\/png but its bytes are image\/jpeg/,
      ],
      [
        'text labelled as PNG',
        [image(dataUri('image/png', Buffer.from('hello world, not an image')))],
        400,
        /not a PNG or JPEG/,
      ],
    ])('%s', async (_name, content, status, pattern) => {
      const response = await post({ model: 'sim-ocr', messages: user(content) });
      expect(response.statusCode).toBe(status);
      const text =
        status === 200
          ? (response.json<{ choices: { message: { content: string } }[] }>().choices[0]?.message
              .content ?? '')
          : response.json<{ error: { message: string; code: string } }>().error.message;
      expect(text).toMatch(pattern);
      if (status !== 200)
        expect(response.json()).toMatchObject({ error: { code: 'INVALID_INPUT' } });
    });

    it('stream: true', async () => {
      const response = await post({
        model: 'sim-ocr',
        stream: true,
        messages: user([image(dataUri('image/png', png(1, 1)))]),
      });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ error: { code: 'INVALID_INPUT', param: 'stream' } });
    });

    it('does not hold vision models that are not OCR models to the OCR rules', async () => {
      const response = await post({
        model: 'sim-vision',
        messages: user([image(dataUri('image/gif', gif)), image(dataUri('image/webp', webp))]),
      });
      expect(response.statusCode).toBe(200);
    });
  });

  describe('conversations', () => {
    it('refuses another key with CONVERSATION_KEY_MISMATCH', async () => {
      const conversationId = `conv-${Date.now()}`;
      expect(
        (
          await post({
            model: 'sim-chat',
            messages: user('first turn'),
            conversation_id: conversationId,
          })
        ).statusCode,
      ).toBe(200);
      const other = await gateway.newKey(accountId);
      const response = await post(
        { model: 'sim-chat', messages: user('second turn'), conversation_id: conversationId },
        other.key,
      );
      expect(response.statusCode).toBe(409);
      expect(response.json()).toMatchObject({
        error: { code: 'CONVERSATION_KEY_MISMATCH', param: 'conversation_id' },
      });
      expect(
        (
          await post({
            model: 'sim-chat',
            messages: user('second turn'),
            conversation_id: conversationId,
          })
        ).statusCode,
      ).toBe(200);
    });

    it('refuses a second turn while the first runs with CONVERSATION_PENDING', async () => {
      const conversationId = `conv-pending-${Date.now()}`;
      const slow = post({
        model: 'sim-chat',
        messages: user('slow turn [sim:delay=300]'),
        conversation_id: conversationId,
      });
      await new Promise((resolve) => setTimeout(resolve, 100));
      const second = await post({
        model: 'sim-chat',
        messages: user('too early'),
        conversation_id: conversationId,
      });
      expect(second.statusCode).toBe(409);
      expect(second.json()).toMatchObject({ error: { code: 'CONVERSATION_PENDING' } });
      expect((await slow).statusCode).toBe(200);
      expect(
        (await post({ model: 'sim-chat', messages: user('now'), conversation_id: conversationId }))
          .statusCode,
      ).toBe(200);
    });
  });
});
