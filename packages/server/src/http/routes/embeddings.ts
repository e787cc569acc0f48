import { z } from 'zod';
import type { FastifyInstance } from 'fastify';
import { costPerMillion } from '../../billing/money.js';
import { invalidInput } from '../../errors/api-error.js';
import { embeddingsContextLengthError } from '../../providers/context-length.js';
import { UpstreamFailure } from '../../providers/upstream-error.js';
import { jsonSchemaOf } from '../../errors/input-schema.js';
import { principalOf } from '../plugins/authenticate.js';
import { inputTokenOutcome } from '../../requests/input-token-outcome.js';
import { runBilledRequest } from '../billed-request.js';
import { judgedAtClaim } from '../idempotency-judgement.js';
import type { AppDeps } from '../deps.js';
import { upstreamCaller } from '../upstream-caller.js';
import { checkInputBytes } from '../../models/input-bytes.js';
import { worstCaseTokenLists, worstCaseTokens } from './worst-case.js';

const MAX_INPUTS = 2048;
/** Token ids in one token-array input (OpenAI's own bound for embeddings inputs is 8192). */
const MAX_TOKENS_PER_INPUT = 8_192;
const tokenList = z.array(z.int().min(0).max(2_147_483_647)).min(1).max(MAX_TOKENS_PER_INPUT);

/** OpenAI's embeddings body: one text or token list, or up to 2,048 of them. */
const embeddingsBody = z.strictObject({
  model: z.string().min(1).max(200),
  input: z.union([
    z.string().min(1),
    z.array(z.string().min(1)).min(1).max(MAX_INPUTS),
    tokenList,
    z.array(tokenList).min(1).max(MAX_INPUTS),
  ]),
  dimensions: z.int().min(1).optional(),
  encoding_format: z.enum(['float', 'base64']).optional(),
  user: z.string().max(256).optional(),
});
/** The route's schema, checked by Ajv before the handler runs (the type below is its own). */
export const embeddingsBodySchema = jsonSchemaOf(embeddingsBody);
type EmbeddingsBody = z.output<typeof embeddingsBody>;

/**
 * `POST /v1/embeddings`, OpenAI's shape. Billed on the upstream's reported prompt tokens. An input
 * its provider refuses as longer than the model's context window is the caller's 400
 * `INVALID_INPUT` naming `input`: failed, released, not moved to another channel
 * (docs/providers.md, "Errors and context length").
 */
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
        const routing = deps.channels.route(model, caller.presence);
        return runBilledRequest(deps, request, reply, {
          model: model.id,
          routing,
          reserve: {
            amount: costPerMillion(worst.tokens, perMillion),
            priceVersion: price.priceVersion,
          },
          execute: async () => {
            const result = await routing
              .run((channel) =>
                deps.providers
                  .embeddings(channel.upstream, caller)
                  .embed({ model: channel.model, input: inputs, dimensions }),
              )
              .catch((error: unknown) => {
                // An input beyond the model's context window: the caller's 400, naming its model.
                throw error instanceof UpstreamFailure && error.refusal === 'context_length'
                  ? error.withApiError(embeddingsContextLengthError(model.id))
                  : error;
              });
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
