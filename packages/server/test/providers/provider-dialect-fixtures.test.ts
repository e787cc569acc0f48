import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import type { ProviderDialectName } from '../../src/config/schema.js';
import { dialects } from '../helpers/dialects.js';
import { recordedUpstream } from '../helpers/recorded-upstream.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';

/**
 * Each provider dialect's recorded answers (fixtures/provider-dialects.json, written from the
 * providers' documentation) replayed through the gateway into the record and the bill. The risk:
 * a provider's usage read from the wrong fields, billed wrongly (new-api billed DeepSeek's cache
 * hits at the input price) or not at all (Kimi's streamed usage lost: the answer streamed, then
 * `submission_unknown` with the hold kept), and a request a provider refuses (`stream_options`
 * to Gemini) or misreads (`max_completion_tokens` where only `max_tokens` is taken).
 *
 * Prices (micro-yuan per million tokens): input 2 000 000, cache read 500 000, cache write = the
 * input price, output 8 000 000, reasoning = the output price. Each line item is
 * ceil(tokens x price / 1e6); the bills, by hand:
 * - openai:   uncached 2006-1920=86 x 2 = 172; cache read 1920 x 0.5 = 960; output 300-192=108
 *             x 8 = 864; reasoning 192 x 8 = 1536; total 3532.
 * - deepseek: uncached 200 x 2 = 400; cache read 1000 x 0.5 = 500; output 500-320=180 x 8 =
 *             1440; reasoning 320 x 8 = 2560; total 4900.
 * - qwen:     uncached 3019-2048-960=11 x 2 = 22; cache read 2048 x 0.5 = 1024; cache write 960
 *             x 2 = 1920; output 104 x 8 = 832; total 3798.
 * - glm:      uncached 1510-1024=486 x 2 = 972; cache read 1024 x 0.5 = 512; output 220 x 8 =
 *             1760; total 3244.
 * - kimi:     uncached 2100-1800=300 x 2 = 600; cache read 1800 x 0.5 = 900; output 90 x 8 =
 *             720; total 2220.
 * - gemini:   uncached 1800 x 2 = 3600; thinking = total 2350 - 1800 - 150 = 400; output 150 x 8
 *             = 1200; reasoning 400 x 8 = 3200; total 8000.
 */
interface Fixture {
  plain_usage: Record<string, unknown>;
  stream_usage_place: 'usage_chunk' | 'finish_chunk' | 'finish_choice';
  usage: {
    prompt: number;
    cached: number;
    cache_write: number | null;
    completion: number;
    reasoning: number;
  };
  stream_options: boolean;
  token_limit_field: 'max_tokens' | 'max_completion_tokens';
  bill: number;
}
const fixtures = JSON.parse(
  readFileSync(new URL('./fixtures/provider-dialects.json', import.meta.url), 'utf8'),
) as Record<ProviderDialectName, Fixture>;
const NAMES: ProviderDialectName[] = ['openai', 'deepseek', 'qwen', 'glm', 'kimi', 'gemini'];

const [sqlite] = dialects;
/** Long enough that each fixture's input is within what the gateway finds credible. */
const PROMPT = 'hello '.repeat(1_000);
const simChat = defaultConfig.models.find((model) => model.id === 'sim-chat');
if (simChat === undefined) throw new Error('no sim-chat in the default configuration');

/** Answers `/<dialect>/v1/chat/completions` with the dialect's fixture, as that provider would. */
async function recordedProviders(): Promise<{
  close: () => Promise<void>;
  url: string;
  bodies: Map<string, Record<string, unknown>[]>;
}> {
  const bodies = new Map<string, Record<string, unknown>[]>();
  const upstream = await recordedUpstream((path, received, response) => {
    const name = path.split('/')[1] as ProviderDialectName;
    const fixture = fixtures[name];
    const body = received;
    bodies.set(name, [...(bodies.get(name) ?? []), body]);
    if (name === 'gemini' && 'stream_options' in body) {
      response.statusCode = 400;
      response.end(
        JSON.stringify([{ error: { code: 400, message: 'Unknown name "stream_options"' } }]),
      );
      return;
    }
    const base = { id: `cmpl-${name}`, created: 1_700_000_000, model: body['model'] };
    if (body['stream'] !== true) {
      response.setHeader('content-type', 'application/json');
      response.end(
        JSON.stringify({
          ...base,
          object: 'chat.completion',
          choices: [
            { index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' },
          ],
          usage: fixture.plain_usage,
        }),
      );
      return;
    }
    response.setHeader('content-type', 'text/event-stream');
    const send = (data: unknown) => response.write(`data: ${JSON.stringify(data)}\n\n`);
    const chunk = { ...base, object: 'chat.completion.chunk' };
    const usage = fixture.plain_usage;
    send({ ...chunk, choices: [{ index: 0, delta: { role: 'assistant', content: 'hi' } }] });
    const finish = { index: 0, delta: {}, finish_reason: 'stop' };
    if (fixture.stream_usage_place === 'finish_choice')
      send({ ...chunk, choices: [{ ...finish, usage }] });
    else if (fixture.stream_usage_place === 'finish_chunk')
      send({ ...chunk, choices: [finish], usage });
    else {
      send({ ...chunk, choices: [finish] });
      const asked = (body['stream_options'] as { include_usage?: boolean } | undefined)
        ?.include_usage;
      if (asked === true) send({ ...chunk, choices: [], usage });
    }
    response.end('data: [DONE]\n\n');
  });
  return { url: upstream.url, bodies, close: upstream.close };
}

describe('provider dialects: recorded answers into exact bills', () => {
  let upstream: Awaited<ReturnType<typeof recordedProviders>>;
  let gateway: TestGateway;
  let key: string;
  let accountId: string;
  beforeAll(async () => {
    upstream = await recordedProviders();
    const config = testConfig({
      upstreams: Object.fromEntries(
        NAMES.map((name) => [
          name,
          { kind: 'openai', base_url: `${upstream.url}/${name}/v1`, dialect: name },
        ]),
      ),
      models: NAMES.map((name) => ({
        ...simChat,
        id: `${name}-chat`,
        upstream: name,
        upstream_model: `${name}-model`,
        token_limit_field: 'max_completion_tokens' as const,
        prices: {
          input_per_million_tokens: 2_000_000,
          cached_input_per_million_tokens: 500_000,
          output_per_million_tokens: 8_000_000,
        },
      })),
    });
    gateway = await startGateway(sqlite!, { config });
    ({ key, accountId } = await gateway.account(1_000_000));
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
    await upstream.close();
  });

  for (const name of NAMES)
    it(`${name}: plain and streamed answers read into the record and billed to the micro-yuan`, async () => {
      const fixture = fixtures[name];
      for (const stream of [false, true]) {
        const before = (await gateway.balance(accountId)).balance;
        const answer = await gateway.call('POST', '/v1/chat/completions', {
          key,
          body: {
            model: `${name}-chat`,
            messages: [{ role: 'user', content: PROMPT }],
            max_tokens: 1_000,
            stream,
          },
        });
        expect(answer.statusCode, answer.body).toBe(200);
        const requestId = String(answer.headers['x-service-request-id']);
        const record = (await gateway.call('GET', `/v1/requests/${requestId}`, { key })).json<{
          status: string;
          usage: Record<string, number>;
          bill: { amount: number };
        }>();
        expect(record.status).toBe('succeeded');
        expect(record.usage).toMatchObject({
          prompt_tokens: fixture.usage.prompt,
          cached_tokens: fixture.usage.cached,
          completion_tokens: fixture.usage.completion,
          reasoning_tokens: fixture.usage.reasoning,
          ...(fixture.usage.cache_write === null
            ? {}
            : { cache_write_tokens: fixture.usage.cache_write }),
        });
        expect(record.bill.amount).toBe(fixture.bill);
        expect((await gateway.balance(accountId)).balance).toBe(before - fixture.bill);
      }
      // What the provider was sent: its output cap's name, and stream_options only where taken.
      const [plain, streamed] = upstream.bodies.get(name) ?? [];
      expect(Object.keys(plain ?? {})).toContain(fixture.token_limit_field);
      expect('stream_options' in (streamed ?? {})).toBe(fixture.stream_options);
    });
});
