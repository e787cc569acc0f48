import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import { parseConfig } from '../../src/config/load.js';
import { dialects } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';
import { recordedUpstream, sendChatCompletion } from '../helpers/recorded-upstream.js';

/**
 * Audio and image tokens a provider reports apart (OpenAI's audio models, Qwen's Omni and VL
 * models: `prompt_tokens_details.audio_tokens` / `image_tokens`, `completion_tokens_details`
 * likewise), replayed through the gateway into the record and the bill. The risks: audio billed at
 * the text price (OpenAI's audio input costs 16 times its text input), a model that prices no
 * modality apart billed differently than before (one micro-yuan of rounding moved between line
 * items is a changed bill), a negative line item when the modality counts overlap the cache
 * reads, and a report whose parts exceed its total billed at all.
 *
 * Prices (micro-yuan per million tokens): input 2 000 000, cache read 500 000, output 8 000 000;
 * the `priced` model also audio input 40 000 000, image input 3 000 000, audio output 80 000 000.
 * The bills, by hand (each line ceil(tokens x price / 1e6)):
 * - audio (prompt 1 000 of which audio 600; completion 500 of which audio 400):
 *   priced: input 400 x 2 = 800; audio_input 600 x 40 = 24 000; output 100 x 8 = 800;
 *   audio_output 400 x 80 = 32 000; total 57 600.
 *   plain:  input 1 000 x 2 = 2 000; output 500 x 8 = 4 000; total 6 000 (as before these prices).
 * - image (prompt 1 300: cache read 256, image 1 200; completion 100): the uncached input is
 *   1 044, all of it image (the other 156 image tokens were among the cache reads):
 *   priced: cache_read 256 x 0.5 = 128; image_input 1 044 x 3 = 3 132; output 100 x 8 = 800;
 *   total 4 060.   plain: input 1 044 x 2 = 2 088; cache_read 128; output 800; total 3 016.
 */
const USAGES = {
  audio: {
    prompt_tokens: 1_000,
    completion_tokens: 500,
    total_tokens: 1_500,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 600 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 400 },
  },
  image: {
    prompt_tokens: 1_300,
    completion_tokens: 100,
    total_tokens: 1_400,
    prompt_tokens_details: { cached_tokens: 256, image_tokens: 1_200, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
  },
  contradiction: {
    prompt_tokens: 1_000,
    completion_tokens: 500,
    total_tokens: 1_500,
    prompt_tokens_details: { cached_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 200, audio_tokens: 400 },
  },
} as const;
type Case = keyof typeof USAGES;

const BILLS: Record<'audio' | 'image', { priced: number; plain: number }> = {
  audio: { priced: 57_600, plain: 6_000 },
  image: { priced: 4_060, plain: 3_016 },
};

const [sqlite] = dialects;
/** Long enough that each usage's input is within what the gateway finds credible. */
const PROMPT = 'hello '.repeat(1_000);
const simChat = defaultConfig.models.find((model) => model.id === 'sim-chat');
if (simChat === undefined) throw new Error('no sim-chat in the default configuration');
const BASE_PRICES = {
  input_per_million_tokens: 2_000_000,
  cached_input_per_million_tokens: 500_000,
  output_per_million_tokens: 8_000_000,
};

/** Answers `/<case>/v1/chat/completions` with that case's usage, plain or streamed. */
const recordedProvider = () =>
  recordedUpstream((path, body, response) =>
    sendChatCompletion(response, body, {
      message: { content: 'hi' },
      deltas: [{ role: 'assistant', content: 'hi' }],
      finishReason: 'stop',
      usage: USAGES[path.split('/')[1] as Case],
    }),
  );

describe('audio and image tokens reported apart: read into the record, billed at their prices', () => {
  let upstream: Awaited<ReturnType<typeof recordedProvider>>;
  let gateway: TestGateway;
  let key: string;
  let accountId: string;
  beforeAll(async () => {
    upstream = await recordedProvider();
    const cases = Object.keys(USAGES) as Case[];
    const config = testConfig({
      upstreams: Object.fromEntries(
        cases.map((name) => [name, { kind: 'openai', base_url: `${upstream.url}/${name}/v1` }]),
      ),
      models: cases.flatMap((name) => [
        { ...simChat, id: `${name}-plain`, upstream: name, prices: BASE_PRICES },
        {
          ...simChat,
          id: `${name}-priced`,
          upstream: name,
          prices: {
            ...BASE_PRICES,
            audio_input_per_million_tokens: 40_000_000,
            image_input_per_million_tokens: 3_000_000,
            audio_output_per_million_tokens: 80_000_000,
          },
        },
      ]),
    });
    gateway = await startGateway(sqlite!, { config });
    ({ key, accountId } = await gateway.account(10_000_000));
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
    await upstream.close();
  });

  const send = (model: string, stream: boolean) =>
    gateway.call('POST', '/v1/chat/completions', {
      key,
      body: { model, messages: [{ role: 'user', content: PROMPT }], max_tokens: 1_000, stream },
    });
  const recordOf = async (requestId: string) =>
    (await gateway.call('GET', `/v1/requests/${requestId}`, { key })).json<{
      status: string;
      usage: Record<string, number> | null;
      reserve: { amount: number; state: string };
      bill: { amount: number; line_items: { item: string; units: number }[] } | null;
    }>();

  for (const name of ['audio', 'image'] as const)
    for (const priced of [true, false])
      it(`${name}, ${priced ? 'priced apart' : 'no modality prices (billed as before)'}: plain and streamed to the micro-yuan`, async () => {
        const bill = priced ? BILLS[name].priced : BILLS[name].plain;
        for (const stream of [false, true]) {
          const before = (await gateway.balance(accountId)).balance;
          const answer = await send(`${name}-${priced ? 'priced' : 'plain'}`, stream);
          expect(answer.statusCode, answer.body).toBe(200);
          const record = await recordOf(String(answer.headers['x-service-request-id']));
          expect(record.status).toBe('succeeded');
          expect(record.bill?.amount).toBe(bill);
          expect((await gateway.balance(accountId)).balance).toBe(before - bill);
          // The hold covered it: the dearest price of each side, whatever the answer.
          expect(record.reserve.amount).toBeGreaterThanOrEqual(bill);
          for (const line of record.bill?.line_items ?? []) expect(line.units).toBeGreaterThan(0);
          const items = (record.bill?.line_items ?? []).map((line) => line.item);
          if (name === 'audio') {
            expect(record.usage).toMatchObject({
              audio_input_tokens: 600,
              audio_output_tokens: 400,
            });
            expect(items.includes('audio_input')).toBe(priced);
            expect(items.includes('audio_output')).toBe(priced);
          } else {
            // A reported 0 says nothing: no audio field on the record.
            expect(record.usage).toMatchObject({ image_input_tokens: 1_200, cached_tokens: 256 });
            expect(record.usage).not.toHaveProperty('audio_input_tokens');
            expect(items.includes('image_input')).toBe(priced);
            expect(items.includes('input')).toBe(!priced);
          }
        }
      });

  it('the hold of a model with audio prices is taken at the dearest of them', async () => {
    const plain = await recordOf(
      String((await send('audio-plain', false)).headers['x-service-request-id']),
    );
    const priced = await recordOf(
      String((await send('audio-priced', false)).headers['x-service-request-id']),
    );
    // The same request, worst case: input at 40 instead of 2, the output cap at 80 instead of 8.
    expect(priced.reserve.amount).toBeGreaterThan(plain.reserve.amount * 9);
  });

  it('audio and reasoning output above completion_tokens is a contradiction: never billed', async () => {
    const before = await gateway.balance(accountId);
    const answer = await send('contradiction-priced', false);
    expect(answer.statusCode).toBe(502);
    const requestId = String(answer.headers['x-service-request-id']);
    const record = await recordOf(requestId);
    expect(record.status).toBe('submission_unknown');
    expect(record.bill).toBeNull();
    expect((await gateway.balance(accountId)).balance).toBe(before.balance);
    await gateway.admin('POST', `/admin/v1/requests/${requestId}/resolve`, {
      action: 'release',
      reason: 'test cleanup',
    });
  });

  it('modality prices only on a chat or OCR model: an embeddings model cannot take them', () => {
    const config = testConfig({
      models: [
        {
          id: 'embed-audio',
          upstream: 'simulator',
          families: ['embeddings'],
          prices: { input_per_million_tokens: 1_000, audio_input_per_million_tokens: 5_000 },
        },
      ],
    });
    expect(() => parseConfig(config, 'test')).toThrow(/audio_input_per_million_tokens/);
  });
});
