import { z } from 'zod';
import { CONFIGURABLE_FIELDS, type RequestField } from './request-fields.js';
import {
  h3ResolutionSchema,
  modelPricesSchema,
  qualitySchema,
  sizeSchema,
  taskPricesSchema,
  tokenPricesSchema,
} from './price-schema.js';

/**
 * The configuration's upstreams and models, each checked on its own (the rules across models and
 * upstreams, and the file as a whole: config/schema.ts, which builds on this file; the price
 * objects: price-schema.ts). Below the rule files (price-rules.ts, channel-rules.ts), which read
 * these types, so that the configuration's schema can use the rules without a circle.
 */

const positiveInt = z.number().int().positive();
const nonNegativeInt = z.number().int().nonnegative();

export const timeoutsSchema = z
  .object({
    connect_ms: positiveInt.default(5_000),
    /** Time until the upstream's response headers arrive. */
    first_byte_ms: positiveInt.default(60_000),
    /** Longest silence between two body chunks. */
    idle_ms: positiveInt.default(60_000),
  })
  .strict();

export const upstreamSchema = z
  .object({
    /**
     * `simulator`: the built-in simulator, started in-process on loopback; `openai`: an
     * OpenAI-compatible server; `cohere`: Cohere/Jina rerank; `ark`: a content generation task
     * API (Volcengine Ark's shape) for H3 models; `anthropic`: Anthropic's API (its chat models
     * speak Messages: `chat_api` is `messages`). The adapter follows the model's family.
     */
    kind: z.enum(['simulator', 'openai', 'cohere', 'ark', 'anthropic']),
    base_url: z.url().optional(),
    /**
     * The protocol this upstream's chat models speak (docs/agents.md, "Upstream protocols"):
     * `chat_completions` (`POST /chat/completions`, the default), `responses` (OpenAI's
     * `POST /responses`) or `messages` (Anthropic's `POST /messages`, key sent as `x-api-key`).
     * Every inbound protocol reaches every one through the internal chat request. Default
     * `messages` for kind `anthropic`, else `chat_completions` (`chatApiOf`).
     */
    chat_api: z.enum(['chat_completions', 'responses', 'messages']).optional(),
    /**
     * Which provider's OpenAI-compatible API this is (docs/providers.md): where it reports usage
     * (DeepSeek's cache counts, Kimi's streamed usage, Qwen's cache writes), which request fields
     * it takes (`stream_options`, the output cap's name). Kinds `openai` and `simulator` (whose
     * answers then take that provider's shape); default `openai`.
     *
     * `ark` is of another protocol: Volcengine Ark's video tasks exactly as the real service
     * behaves (docs/providers.md, "Volcengine Ark (video tasks)"), for kinds `ark` and
     * `simulator` (whose H3 routes then drop every extension real Ark lacks). It has no look-up
     * by idempotency key, so `task_lookup` is off and may not be turned on.
     */
    dialect: z.enum(['openai', 'deepseek', 'qwen', 'glm', 'kimi', 'gemini', 'ark']).optional(),
    api_key_env: z
      .string()
      .regex(/^[A-Z_][A-Z0-9_]*$/)
      .optional(),
    timeouts: timeoutsSchema.default({ connect_ms: 5_000, first_byte_ms: 60_000, idle_ms: 60_000 }),
    connections: positiveInt.default(128),
    /**
     * Most of this upstream's connections one account may use at once; its further requests
     * wait in that account's queue (default: a quarter of `connections`, at least 1). See
     * docs/security.md.
     */
    connections_per_account: positiveInt.optional(),
    /** Longest wait for an upstream connection before the request fails unsent (503). */
    queue_timeout_ms: positiveInt.default(30_000),
    /**
     * Whether the task adapters may look an unanswered submission up, read-only, by the
     * idempotency key it was sent with (`GET …?idempotency_key=`: videos, H3). Only an upstream
     * that offers that can say yes; default: the simulator yes (unless it answers as real Ark,
     * `dialect: ark`, which refuses it), others no (such a task waits for an operator). See
     * taskLookupOf.
     */
    task_lookup: z.boolean().optional(),
    /**
     * Whether the upstream answers `GET <base_url>/tollgate/requests/{id}` for a text call that
     * named its record (`X-Tollgate-Request-Id`): what became of a call whose answer never came
     * (docs/requests.md "Reconciled by look-up"). Default off: OpenAI-style APIs have no such
     * look-up; the simulator offers it (turn it on for its upstream), as can an operator's proxy.
     */
    request_lookup: z.boolean().default(false),
    /**
     * Upstream statuses on which a task's submission (images, videos, H3) moves to the model's
     * next channel (docs/routing.md "Tasks"). Default none: a task fails over only when nothing
     * was sent, since a status written by a proxy or load balancer after it forwarded the
     * submission means a job already made, and a second one elsewhere is billed separately.
     * List a status only where this upstream itself answers it before any work.
     */
    task_failover_statuses: z.array(z.number().int().min(400).max(599)).max(32).default([]),
    /**
     * How long this upstream's look-up (`task_lookup`, `request_lookup`) must keep answering
     * "no such job" for a submission whose answer never came before the gateway believes the
     * upstream never received it: the task or text record fails and its hold is released
     * (docs/tasks.md "Look-up", docs/requests.md "Reconciled by look-up"). Counted from the
     * first such answer, which comes after the last send could have started. Longer than the
     * upstream's own timeouts (`upstreamCallBoundMs`), so a send still on its way has arrived or
     * been given up by then; default `notReceivedAfterMsOf`.
     */
    not_received_after_ms: positiveInt.optional(),
  })
  .strict()
  .superRefine((upstream, context) => {
    if (upstream.kind === 'anthropic' && chatApiOf(upstream) !== 'messages')
      context.addIssue({
        code: 'custom',
        path: ['chat_api'],
        message: 'an anthropic upstream speaks messages',
      });
    if (upstream.dialect === 'ark') arkDialectIssues(upstream, context);
    else if (
      upstream.dialect !== undefined &&
      upstream.kind !== 'openai' &&
      upstream.kind !== 'simulator'
    )
      context.addIssue({
        code: 'custom',
        path: ['dialect'],
        message: 'only an openai (or simulator) upstream has a dialect',
      });
    if (
      upstream.dialect !== undefined &&
      upstream.dialect !== 'ark' &&
      chatApiOf(upstream) !== 'chat_completions'
    )
      context.addIssue({
        code: 'custom',
        path: ['dialect'],
        message: 'a dialect is of the chat_completions protocol: leave chat_api out',
      });
    if (upstream.kind !== 'simulator' && upstream.base_url === undefined) {
      context.addIssue({
        code: 'custom',
        path: ['base_url'],
        message: 'required unless kind is simulator',
      });
    }
    const bound = upstreamCallBoundMs(upstream);
    if (upstream.not_received_after_ms !== undefined && upstream.not_received_after_ms <= bound) {
      context.addIssue({
        code: 'custom',
        path: ['not_received_after_ms'],
        message: `must be longer than this upstream's timeouts (queue_timeout_ms + timeouts.connect_ms + first_byte_ms + idle_ms = ${bound} ms): a shorter window could fail, and release the money of, work still on its way to the upstream`,
      });
    }
  });

/**
 * The rules of `dialect: ark` (Volcengine Ark's video tasks as the real service behaves): only an
 * `ark` or `simulator` upstream speaks it; it is not a chat protocol; and Ark cannot find a task
 * by the idempotency key it was sent with, so the look-up cannot be turned on.
 */
function arkDialectIssues(
  upstream: { kind: string; chat_api?: string | undefined; task_lookup?: boolean | undefined },
  context: z.RefinementCtx,
): void {
  if (upstream.kind !== 'ark' && upstream.kind !== 'simulator')
    context.addIssue({
      code: 'custom',
      path: ['dialect'],
      message: `dialect ark is Volcengine Ark's video task protocol: only an ark (or simulator) upstream speaks it, not kind ${upstream.kind}`,
    });
  if (upstream.chat_api !== undefined)
    context.addIssue({
      code: 'custom',
      path: ['chat_api'],
      message: 'dialect ark is a video task protocol, not a chat one: leave chat_api out',
    });
  if (upstream.task_lookup === true)
    context.addIssue({
      code: 'custom',
      path: ['task_lookup'],
      message:
        'Volcengine Ark (dialect ark) cannot find a task by the idempotency key it was sent with: leave task_lookup out (an unanswered submission waits for an operator)',
    });
}

export const familySchema = z.enum([
  'chat',
  'ocr',
  'embeddings',
  'rerank',
  'images',
  'videos',
  'h3',
]);
export const featureSchema = z.enum([
  'image_input',
  'video_input',
  'tools',
  'thinking',
  'structured_output',
  'streaming',
]);

export const h3RoleSchema = z.enum([
  'first_frame',
  'last_frame',
  'reference_image',
  'reference_video',
  'reference_audio',
]);

/**
 * Where an H3 task's input video comes from: an H3 `generate` or `regenerate` task, a
 * `/v1/videos` task, or an uploaded asset (`reference_video`).
 */
export const h3VideoSourceSchema = z.enum(['generated', 'regenerated', 'video_task', 'upload']);

/**
 * One combination the configuration does not open (spec 4.4: certain audio references,
 * re-editing a work, video understanding). It closes an input when every condition it names
 * holds; the quote then lists `reason` in `closed_reasons`, and submit is refused.
 */
export const h3ClosedSchema = z
  .object({
    action: z.enum(['generate', 'regenerate', 'understand']).optional(),
    /** Any reference asset has one of these roles. */
    reference_roles: z.array(h3RoleSchema).min(1).optional(),
    /** The input video comes from one of these. */
    video_sources: z.array(h3VideoSourceSchema).min(1).optional(),
    reason: z.string().min(1).max(300),
  })
  .strict();

/**
 * One way to serve a model: an upstream and the model name it knows (docs/routing.md). Higher
 * `priority` is tried first; `weight` shares requests within one priority.
 */
export const channelSchema = z
  .object({
    /** The channel's id in the admin API and CLI; default `<model id>~<index>`. */
    id: z
      .string()
      .regex(
        /^[A-Za-z0-9][A-Za-z0-9._:~-]{0,127}$/,
        'channel ids are 1-128 of A-Z a-z 0-9 . _ : ~ -',
      )
      .optional(),
    upstream: z.string(),
    /** The model name sent to this upstream; defaults to the model's `id`. */
    model: z.string().min(1).optional(),
    weight: positiveInt.max(1_000_000).default(1),
    priority: z.number().int().min(-1_000_000).max(1_000_000).default(0),
    /** Most requests in flight on this channel in this process; more skip to another channel. */
    max_concurrency: positiveInt.optional(),
    /** Most requests sent on this channel per minute in this process; more skip to another channel. */
    requests_per_minute: positiveInt.optional(),
    /**
     * What this upstream charges the operator, in the shape of the model's `prices`: recorded
     * per request as `channel_cost` (margin per channel). Never changes what the caller is
     * quoted or billed: that is always the model's price.
     */
    cost: modelPricesSchema.optional(),
  })
  .strict();

export const modelSchema = z
  .object({
    id: z
      .string()
      .regex(
        /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/,
        'model ids are 1-128 of A-Z a-z 0-9 . _ : / -',
      ),
    /** The one upstream serving the model; give this or `channels`, not both. */
    upstream: z.string().optional(),
    /** The model name sent upstream; defaults to `id`. */
    upstream_model: z.string().optional(),
    /** Several upstreams serving the model, with safe failover (docs/routing.md). */
    channels: z.array(channelSchema).min(1).max(32).optional(),
    families: z.array(familySchema).min(1),
    /** Chat only: the enabled feature combinations. */
    combinations: z.array(z.array(featureSchema)).default([]),
    prices: modelPricesSchema,
    /** Confirms that a price of 0 is meant (config/price-rules.ts, `zeroPriceIssues`). */
    free: z.boolean().optional(),
    owned_by: z.string().default('tollgate'),
    /** Embeddings: dimension used when the caller gives none, and the largest accepted. */
    default_dimensions: positiveInt.optional(),
    max_dimensions: positiveInt.optional(),
    /** Largest input accepted, in UTF-8 bytes of text (the worst-case token count). */
    max_input_bytes: positiveInt.default(1_000_000),
    /** Rerank: most documents in one call. */
    max_documents: positiveInt.default(1_000),
    /** Chat: the largest output the model may produce; the default output cap held. */
    max_output_tokens: positiveInt.default(4_096),
    /**
     * Chat: the body field the upstream takes the output limit in. OpenAI's reasoning models
     * (o1, o3, o4-mini) refuse `max_tokens` and take `max_completion_tokens`.
     */
    token_limit_field: z.enum(['max_tokens', 'max_completion_tokens']).default('max_tokens'),
    /**
     * Chat: send `max_output_tokens` when the caller gives no limit (for upstreams that refuse a
     * request without one). Otherwise none is sent; the hold still counts the full cap.
     */
    token_limit_required: z.boolean().default(false),
    /**
     * Chat: an answer with no output tokens that ended in an upstream error or without a finish
     * reason is not charged (docs/billing.md, "Zero-completion insurance").
     */
    zero_completion_insurance: z.boolean().default(true),
    /**
     * Chat: the most tool calls of one answer billed at the model's `per_tool_call` fee. The hold
     * covers this many (one with `parallel_tool_calls: false`); an answer with more is billed
     * this many and flagged for review (docs/billing.md, "Fees").
     */
    max_tool_calls: positiveInt.max(1_000).default(16),
    /** Chat: worst-case input tokens counted for each image and each video. */
    image_input_tokens: positiveInt.default(1_500),
    video_input_tokens: positiveInt.default(8_000),
    /**
     * Chat: optional OpenAI request fields the upstream supports and is sent (docs/chat.md,
     * "Request fields"); unlisted ones are dropped (named in `X-Tollgate-Dropped-Fields`) or,
     * when dropping would change the answer, refused.
     */
    upstream_fields: z
      .array(z.enum(CONFIGURABLE_FIELDS as [RequestField, ...RequestField[]]))
      .default([]),
    /** Chat: accept https image URLs (fetched by the gateway through a guarded fetch). */
    image_urls: z.boolean().default(false),
    /**
     * Images: sizes offered; the first is the size of a request that names none (default:
     * every size priced in `per_image`, smallest first).
     */
    image_sizes: z.array(sizeSchema).min(1).optional(),
    /**
     * Images: qualities offered (default: every quality priced for the size). The first is the
     * quality of a request that names none (default `standard`).
     */
    image_qualities: z.array(qualitySchema).min(1).optional(),
    /** Images: most images in one request (`n`). */
    max_images: positiveInt.max(100).default(4),
    /**
     * Videos: sizes offered; the first is the size of a request that names none (default:
     * every size priced in `per_second`, smallest first).
     */
    video_sizes: z.array(sizeSchema).min(1).optional(),
    /** Videos: the whole seconds a request may ask for; the first is the default. */
    video_seconds: z.array(positiveInt.max(3_600)).min(1).default([4, 8, 12]),
    /** Videos: whether a request may ask for generated audio (`generate_audio`). */
    generate_audio: z.boolean().default(false),
    /** Images and videos: most reference images (`assetIds`) in one request; 0 allows none. */
    max_reference_images: nonNegativeInt.max(100).default(0),
    /** H3: the model sent upstream per action (default `upstream_model`, else `id`). */
    h3_upstream_models: z
      .object({
        generate: z.string().min(1).optional(),
        regenerate: z.string().min(1).optional(),
        understand: z.string().min(1).optional(),
      })
      .strict()
      .optional(),
    /** H3: the combinations that are not open (docs/h3.md, "Closed combinations"). */
    h3_closed: z.array(h3ClosedSchema).default([]),
    /** What an asset uploaded for this model (`X-Tollgate-Model`) must be. */
    asset_requirements: z
      .object({
        media_types: z.array(z.string()).optional(),
        max_bytes: positiveInt.optional(),
        max_width: positiveInt.optional(),
        max_height: positiveInt.optional(),
        max_duration_seconds: z.number().positive().optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

export type ModelConfig = z.output<typeof modelSchema>;
export type ChannelConfig = z.output<typeof channelSchema>;
export type UpstreamConfig = z.output<typeof upstreamSchema>;

/**
 * The provider an OpenAI-compatible upstream is (`dialect`, default `openai`). `ark` is no chat
 * dialect (an Ark upstream serves video tasks): its chat, were one asked of it, reads as OpenAI's.
 */
export type ProviderDialectName = Exclude<NonNullable<UpstreamConfig['dialect']>, 'ark'>;
export const dialectOf = (upstream: Pick<UpstreamConfig, 'dialect'>): ProviderDialectName =>
  upstream.dialect === undefined || upstream.dialect === 'ark' ? 'openai' : upstream.dialect;

/** The protocol an upstream's chat models speak: its `chat_api`, by default by its kind. */
export function chatApiOf(
  upstream: Pick<UpstreamConfig, 'kind' | 'chat_api'>,
): 'chat_completions' | 'responses' | 'messages' {
  return upstream.chat_api ?? (upstream.kind === 'anthropic' ? 'messages' : 'chat_completions');
}
export type TokenPrices = z.output<typeof tokenPricesSchema>;
export type TaskPrices = z.output<typeof taskPricesSchema>;
export type ModelPrices = z.output<typeof modelPricesSchema>;
export type Family = z.output<typeof familySchema>;
export type Feature = z.output<typeof featureSchema>;
export type H3Resolution = z.output<typeof h3ResolutionSchema>;
export type H3VideoSource = z.output<typeof h3VideoSourceSchema>;
export type H3Closed = z.output<typeof h3ClosedSchema>;

/**
 * The longest one call to an upstream can take before the gateway gives up on it: the wait for
 * a connection, connect, first byte and one idle gap. A send that started longer ago than this
 * has reached the upstream or been abandoned.
 */
export function upstreamCallBoundMs(
  upstream: Pick<UpstreamConfig, 'queue_timeout_ms' | 'timeouts'>,
): number {
  const { connect_ms, first_byte_ms, idle_ms } = upstream.timeouts;
  return upstream.queue_timeout_ms + connect_ms + first_byte_ms + idle_ms;
}

/** The shortest default of `not_received_after_ms`: 10 minutes. */
export const MIN_DEFAULT_NOT_RECEIVED_AFTER_MS = 10 * 60_000;

/**
 * An upstream's `not_received_after_ms`: the configured one, else twice its call bound, at
 * least 10 minutes (with the default timeouts: 10 minutes).
 */
export const notReceivedAfterMsOf = (
  upstream: Pick<UpstreamConfig, 'queue_timeout_ms' | 'timeouts' | 'not_received_after_ms'>,
): number =>
  upstream.not_received_after_ms ??
  Math.max(MIN_DEFAULT_NOT_RECEIVED_AFTER_MS, 2 * upstreamCallBoundMs(upstream));

/**
 * Whether an upstream's task adapters look unanswered submissions up (`task_lookup`, default per
 * kind): the simulator yes, unless it answers as real Ark (`dialect: ark`), which cannot.
 */
export const taskLookupOf = (
  upstream: Pick<UpstreamConfig, 'kind' | 'task_lookup' | 'dialect'>,
): boolean => upstream.task_lookup ?? (upstream.kind === 'simulator' && upstream.dialect !== 'ark');
