import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { ProviderDialectName } from '../../src/config/schema.js';
import {
  CONTEXT_LENGTH_RULES,
  ERROR_BODY_BYTES,
  contextLengthError,
  contextLengthReader,
  isContextLengthError,
  type ContextLengthDialect,
} from '../../src/providers/context-length.js';
import { readPrefix } from '../../src/providers/upstream-http.js';
import { upstreamStatusFailure } from '../../src/providers/upstream-error.js';
import { judgeAttempt, type FailoverUpstream } from '../../src/routing/failover-rule.js';
import { defaultConfig } from '../../src/config/default-config.js';
import { dialects } from '../helpers/dialects.js';
import { startGateway, testConfig } from '../helpers/gateway.js';

/**
 * The context-length rules (src/providers/context-length.ts) against each provider's recorded
 * bodies. The risks: a provider's context-length error missed (the caller told the upstream
 * failed, 502, when the input is theirs to shorten); or, worse, another refusal read as one
 * (a 400 about money, a parameter or the account turned into "shorten your input"), a rule that
 * fires for another provider's words, or a body read without bound.
 */
interface Recorded {
  status: number;
  body: unknown;
}
const outcomes = JSON.parse(
  readFileSync(new URL('./fixtures/provider-dialect-outcomes.json', import.meta.url), 'utf8'),
) as Record<ProviderDialectName, { error: Recorded; context_overflow: Recorded }>;
const NAMES: ProviderDialectName[] = ['openai', 'deepseek', 'qwen', 'glm', 'kimi', 'gemini'];

const anthropicOverflow = {
  type: 'error',
  error: {
    type: 'invalid_request_error',
    message: 'prompt is too long: 208310 tokens > 200000 maximum',
  },
};
const responsesOverflow = {
  error: {
    message:
      'Your input exceeds the context window of this model. Please adjust your input and try again.',
    type: 'invalid_request_error',
    param: 'input',
    code: 'context_length_exceeded',
  },
};

const recognised = (dialect: ContextLengthDialect, status: number, body: unknown) =>
  isContextLengthError(CONTEXT_LENGTH_RULES[dialect], status, body);

describe('context-length rules, one per provider dialect', () => {
  for (const name of NAMES)
    it(`${name}: its recorded context-length error is recognised; its other error, and every other provider's, are not`, () => {
      const { context_overflow: overflow, error } = outcomes[name];
      expect(recognised(name, overflow.status, overflow.body)).toBe(true);
      expect(recognised(name, error.status, error.body)).toBe(false);
      // The same body under another status is not this provider's context-length answer.
      expect(recognised(name, 500, overflow.body)).toBe(false);
      expect(recognised(name, 429, overflow.body)).toBe(false);
    });

  it("the rules are the providers' own: GLM's code 1261 means nothing to the others", () => {
    const glm = outcomes.glm.context_overflow;
    for (const name of NAMES.filter((other) => other !== 'glm'))
      expect(recognised(name, glm.status, glm.body)).toBe(false);
  });

  it("Anthropic's and the Responses API's", () => {
    expect(recognised('anthropic_messages', 400, anthropicOverflow)).toBe(true);
    expect(recognised('openai_responses', 400, responsesOverflow)).toBe(true);
    // Another invalid request, or the same words under another type or status, is not.
    expect(
      recognised('anthropic_messages', 400, {
        type: 'error',
        error: {
          type: 'invalid_request_error',
          message: 'messages: text content blocks must be non-empty',
        },
      }),
    ).toBe(false);
    expect(
      recognised('anthropic_messages', 400, {
        type: 'error',
        error: { type: 'api_error', message: anthropicOverflow.error.message },
      }),
    ).toBe(false);
    expect(recognised('anthropic_messages', 529, anthropicOverflow)).toBe(false);
    expect(
      recognised('openai_responses', 400, {
        error: { ...responsesOverflow.error, code: 'invalid_value', message: 'Invalid value' },
      }),
    ).toBe(false);
  });

  it('near misses stay refusals of another kind', () => {
    // Qwen's other ranges are about parameters, not the input.
    expect(
      recognised('qwen', 400, {
        error: {
          message:
            '<400> InternalError.Algo.InvalidParameter: Range of max_tokens should be [1, 8192]',
          type: 'invalid_request_error',
          code: 'invalid_parameter_error',
        },
      }),
    ).toBe(false);
    // OpenAI's other invalid requests on `messages`.
    expect(
      recognised('openai', 400, {
        error: {
          message: "Invalid 'messages': empty array.",
          type: 'invalid_request_error',
          param: 'messages',
          code: 'empty_array',
        },
      }),
    ).toBe(false);
    // Not JSON, no error object, an error that is not an object.
    for (const body of [
      undefined,
      'maximum context length',
      { message: 'maximum context length' },
      { error: 'maximum context length' },
      [],
    ])
      expect(recognised('openai', 400, body)).toBe(false);
  });

  it('servers of the OpenAI dialect that send only the words, without the code (vLLM), are recognised', () => {
    expect(
      recognised('openai', 400, {
        error: {
          message:
            "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.",
          type: 'BadRequestError',
          code: 400,
        },
      }),
    ).toBe(true);
  });

  it("the caller's error is ours: 400 INVALID_INPUT naming messages, nothing of the provider's words", () => {
    const read = contextLengthReader('deepseek', 'deepseek-chat');
    const { status, body } = outcomes.deepseek.context_overflow;
    const result = read(status, body);
    expect(result?.refusal).toBe('context_length');
    expect(result?.apiError).toMatchObject({
      status: 400,
      code: 'INVALID_INPUT',
      param: 'messages',
    });
    expect(result?.apiError.message).toMatch(
      /^messages: the input is longer than deepseek-chat's context window allows/,
    );
    expect(result?.apiError.message).not.toMatch(/131072|131134|reduce the length/);
    expect(read(outcomes.deepseek.error.status, outcomes.deepseek.error.body)).toBeUndefined();
  });
});

describe('the failover rule', () => {
  it("a context-length refusal is the request's own: refused (no other channel, no fault of this one), whatever its status", () => {
    const upstream: FailoverUpstream = { kind: 'openai', task_failover_statuses: [] };
    const recognised = { apiError: contextLengthError('m'), refusal: 'context_length' } as const;
    expect(judgeAttempt(upstreamStatusFailure(400, null, recognised), upstream)).toBe('refused');
    // Even under a status that would move the request (no provider sends it so; the rule says so).
    expect(judgeAttempt(upstreamStatusFailure(429, null, recognised), upstream)).toBe('refused');
    expect(judgeAttempt(upstreamStatusFailure(429, null), upstream)).toBe('not_processed');
    expect(upstreamStatusFailure(400, 'up-1', recognised)).toMatchObject({
      certainty: 'failed',
      upstreamStatus: 400,
      upstreamRequestId: 'up-1',
      detail: 'upstream status 400: context_length',
      apiError: { code: 'INVALID_INPUT', param: 'messages' },
    });
  });
});

describe('an error body is read to a bound', () => {
  it('reads a short body whole, and only the first ERROR_BODY_BYTES of a long one, destroying the rest', async () => {
    expect(
      await readPrefix(Readable.from([Buffer.from('{"error":'), Buffer.from('{}}')]), 64),
    ).toBe('{"error":{}}');
    let produced = 0;
    const endless = new Readable({
      read() {
        produced += 1;
        this.push(Buffer.alloc(4_096, 0x61));
      },
    });
    const prefix = await readPrefix(endless, ERROR_BODY_BYTES);
    expect(prefix).toHaveLength(ERROR_BODY_BYTES);
    expect(endless.destroyed).toBe(true);
    expect(produced).toBeLessThan(ERROR_BODY_BYTES / 4_096 + 3);
  });

  it('a context-length body padded past the bound is not recognised (cut, it is no longer JSON)', async () => {
    const body = JSON.stringify({
      error: {
        ...(outcomes.openai.context_overflow.body as { error: object }).error,
        padding: 'x'.repeat(ERROR_BODY_BYTES),
      },
    });
    const text = await readPrefix(Readable.from([Buffer.from(body)]), ERROR_BODY_BYTES);
    expect(() => JSON.parse(text) as unknown).toThrow();
  });

  it('fails when the connection breaks before the bound', async () => {
    const reset = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
    const broken = new Readable({
      read() {
        this.destroy(reset);
      },
    });
    await expect(readPrefix(broken, ERROR_BODY_BYTES)).rejects.toBe(reset);
  });
});

describe('the simulator refuses as each provider does ([sim:context_overflow]), and the gateway reads it', () => {
  it("in every dialect, plain and streamed: the caller's 400, failed, released, nothing charged", async () => {
    const simChat = defaultConfig.models.find((model) => model.id === 'sim-chat');
    if (simChat === undefined) throw new Error('no sim-chat');
    const gateway = await startGateway(dialects[0]!, {
      config: testConfig({
        upstreams: Object.fromEntries(
          NAMES.map((name) => [`sim-${name}`, { kind: 'simulator', dialect: name }]),
        ),
        models: NAMES.map((name) => ({ ...simChat, id: `${name}-chat`, upstream: `sim-${name}` })),
      }),
    });
    try {
      const { key, accountId } = await gateway.account(1_000_000);
      const before = await gateway.balance(accountId);
      for (const name of NAMES)
        for (const stream of [false, true]) {
          const answer = await gateway.call('POST', '/v1/chat/completions', {
            key,
            body: {
              model: `${name}-chat`,
              messages: [{ role: 'user', content: 'far too long [sim:context_overflow]' }],
              stream,
            },
          });
          expect(answer.statusCode, `${name}: ${answer.body}`).toBe(400);
          expect(answer.json()).toMatchObject({
            error: { code: 'INVALID_INPUT', param: 'messages' },
          });
          const id = String(answer.headers['x-service-request-id']);
          expect((await gateway.call('GET', `/v1/requests/${id}`, { key })).json()).toMatchObject({
            status: 'failed',
            bill: null,
            reserve: { state: 'released' },
          });
        }
      expect(await gateway.balance(accountId)).toEqual(before);
      await gateway.expectLedgerClean();
    } finally {
      await gateway.close();
    }
  });
});
