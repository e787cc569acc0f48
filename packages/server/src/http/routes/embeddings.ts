import type { FastifyInstance } from 'fastify';
import { costPerMillion } from '../../billing/money.js';
import { invalidInput } from '../../errors/api-error.js';
import { principalOf } from '../plugins/authenticate.js';
import { inputTokenOutcome } from '../../requests/input-token-outcome.js';
import { runBilledRequest } from '../billed-request.js';
import { judgedAtClaim } from '../idempotency-judgement.js';
import type { AppDeps } from '../deps.js';
import { upstreamCaller } from '../upstream-caller.js';
import { checkInputBytes } from '../../models/input-bytes.js';
import { worstCaseTokenLists, worstCaseTokens } from './worst-case.js';

interface EmbeddingsBody {
  model: string;
  input: string | string[] | number[] | number[][];
  dimensions?: number;
  encoding_format?: 'float' | 'base64';
  user?: string;
}

const MAX_INPUTS = 2048;
/** Token ids in one token-array input (OpenAI's own bound for embeddings inputs is 8192). */
const MAX_TOKENS_PER_INPUT = 8_192;
const tokenList = {
  type: 'array',
  minItems: 1,
  maxItems: MAX_TOKENS_PER_INPUT,
  items: { type: 'integer', minimum: 0, maximum: 2_147_483_647 },
} as const;

export const embeddingsBodySchema = {
  type: 'object',
  required: ['model', 'input'],
  additionalProperties: false,
  properties: {
    model: { type: 'string', minLength: 1, maxLength: 200 },
    input: {
      anyOf: [
        { type: 'string', minLength: 1 },
        {
          type: 'array',
          minItems: 1,
          maxItems: MAX_INPUTS,
          items: { type: 'string', minLength: 1 },
        },
        tokenList,
        { type: 'array', minItems: 1, maxItems: MAX_INPUTS, items: tokenList },
      ],
    },
    dimensions: { type: 'integer', minimum: 1 },
    encoding_format: { type: 'string', enum: ['float', 'base64'] },
    user: { type: 'string', maxLength: 256 },
  },
} as const;

/** `POST /v1/embeddings`, OpenAI's shape. Billed on the upstream's reported prompt tokens. */
export function registerEmbeddings(scope: FastifyInstance, deps: AppDeps): void {
  scope.post<{ Body: EmbeddingsBody }>(
    '/v1/embeddings',
    judgedAtClaim<{ Body: EmbeddingsBody }>(
      deps.requests.records,
      { schema: { body: embeddingsBodySchema } },
      async (request, reply) => {
        const body = request.body;
        const model = deps.catalog.resolve(principalOf(request), body.model, 'embeddings');
        const inputs = inputsOf(body.input);
        const maxDimensions = model.max_dimensions ?? 4096;
        if (body.dimensions !== undefined && body.dimensions > maxDimensions)
          throw invalidInput('dimensions', `must be at most ${maxDimensions} for ${model.id}`);
        const worst = isTokenLists(inputs) ? worstCaseTokenLists(inputs) : worstCaseTokens(inputs);
        checkInputBytes(model, worst.bytes, 'input');
        const price = await deps.prices.currentFor(model.id);
        const perMillion = price.prices.input_per_million_tokens ?? 0;
        const dimensions = body.dimensions ?? model.default_dimensions;
        const caller = upstreamCaller(request, reply);
        const routing = deps.channels.route(model, caller.abandoned);
        return runBilledRequest(deps, request, reply, {
          model: model.id,
          routing,
          reserve: {
            amount: costPerMillion(worst.tokens, perMillion),
            priceVersion: price.priceVersion,
          },
          execute: async () => {
            const result = await routing.run((channel) =>
              deps.providers
                .embeddings(channel.upstream, caller)
                .embed({ model: channel.model, input: inputs, dimensions }),
            );
            const usage = { prompt_tokens: result.promptTokens, total_tokens: result.promptTokens };
            return inputTokenOutcome({
              family: 'embeddings',
              field: 'prompt_tokens',
              reportedTokens: result.promptTokens,
              worstCaseTokens: worst.tokens,
              perMillion,
              routing,
              usage,
              upstreamRequestId: result.upstreamRequestId,
              body: {
                object: 'list',
                data: result.vectors.map((vector, index) => ({
                  object: 'embedding',
                  index,
                  embedding: body.encoding_format === 'base64' ? toBase64(vector) : vector,
                })),
                model: model.id,
                usage,
              },
            });
          },
        });
      },
    ),
  );
}

/** One input per element: a text, a list of texts, one token list, or a list of token lists. */
function inputsOf(input: EmbeddingsBody['input']): string[] | number[][] {
  if (typeof input === 'string') return [input];
  if (input.every((item): item is number => typeof item === 'number')) return [input];
  return input;
}

function isTokenLists(inputs: string[] | number[][]): inputs is number[][] {
  return Array.isArray(inputs[0]);
}

/** OpenAI's base64 form: little-endian float32 values. */
function toBase64(vector: readonly number[]): string {
  const floats = new Float32Array(vector);
  return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength).toString('base64');
}
