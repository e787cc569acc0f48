import { parseCidrList } from '../auth/ip-allowlist.js';
import { DEFAULT_BUDGET_TIME_ZONE, isKnownTimeZone } from '../budgets/budget-windows.js';
import { z } from 'zod';
import { CONFIGURABLE_FIELDS, type RequestField } from '../chat/request-fields.js';
import { channelIssues } from './channel-rules.js';
import { modelPriceIssues, zeroPriceIssues } from './price-rules.js';
import {
  h3PricesSchema,
  h3ResolutionSchema,
  modelPricesSchema,
  qualitySchema,
  sizeSchema,
  taskPricesSchema,
  tokenPricesSchema,
} from './price-schema.js';
import { taskEngineSchema } from './task-engine-schema.js';

export {
  h3PricesSchema,
  h3ResolutionSchema,
  modelPricesSchema,
  qualitySchema,
  sizeSchema,
  taskPricesSchema,
  tokenPricesSchema,
};

/**
 * The configuration file's schema (the price objects: price-schema.ts). Every amount is an integer number of micro-yuan; every price
 * is per unit named in its field (per 1 000 000 tokens, per image, per second). Secrets never appear here: an upstream
 * names the environment variable that holds its key (`api_key_env`).
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
     * API (Volcengine Ark's shape) for H3 models. The adapter follows the model's family.
     */
    kind: z.enum(['simulator', 'openai', 'cohere', 'ark']),
    base_url: z.url().optional(),
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
     * that offers that can say yes; default: the simulator yes, others no (such a task waits for
     * an operator). See taskLookupOf.
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

export const limitsSchema = z
  .object({
    /** Largest request body accepted, in bytes (413 BODY_TOO_LARGE above it). */
    body_bytes: positiveInt.default(4 * 1024 * 1024),
    requests_per_minute: positiveInt.default(600),
    concurrent_requests: positiveInt.default(32),
    /** Largest asset upload, in bytes (413 BODY_TOO_LARGE above it). */
    asset_bytes: positiveInt.default(1024 * 1024 * 1024),
    /**
     * Upload bytes one account may have in staging at once, per instance, all its keys together
     * (429 RATE_LIMITED above it; an upload larger than this alone is 413). See docs/assets.md.
     */
    staged_upload_bytes_per_account: positiveInt.default(2 * 1024 * 1024 * 1024),
    /** Uploads one account may have in progress at once, per instance (429 above it). */
    concurrent_uploads_per_account: positiveInt.default(8),
    /** Requests in flight at once for all keys of one account together (429 above it). */
    concurrent_requests_per_account: positiveInt.default(64),
    /**
     * With Redis: how long the concurrency slots of a request outlive their last renewal (each
     * instance renews its requests' slots every third of this), so an instance that died frees
     * its slots within this many milliseconds. See docs/configuration.md.
     */
    concurrency_lease_ms: positiveInt.min(300).default(30_000),
    /**
     * Shares one account may have awaiting review at once, all its keys together (429
     * RATE_LIMITED above it, docs/shares.md): what one caller can put in the review queue.
     */
    pending_shares_per_account: positiveInt.default(20),
    /**
     * Online top-up orders one account may have open (awaiting payment) at once (429
     * RATE_LIMITED above it, docs/payments.md): what one member can make the provider open.
     */
    open_topups_per_account: positiveInt.default(5),
  })
  .strict();

/**
 * What one client connection may cost the process. The threats each answers are in
 * docs/security.md; all times are milliseconds.
 */
export const serverSchema = z
  .object({
    /** Open client connections in all; more are closed at once (keep it below the fd limit). */
    max_connections: positiveInt.default(4_096),
    /** Open connections from one client address (behind a proxy, raise it to max_connections). */
    max_connections_per_address: positiveInt.default(256),
    /** From connection (or the previous response) until the next request's headers are complete. */
    headers_timeout_ms: positiveInt.default(10_000),
    /** Longest silence while a request body arrives. */
    body_idle_timeout_ms: positiveInt.default(30_000),
    /** From the request's first byte until its whole body has arrived. */
    request_timeout_ms: positiveInt.default(600_000),
    /** Idle time of a kept-alive connection between two requests. */
    keep_alive_timeout_ms: positiveInt.default(5_000),
    /** Requests served on one connection before it is closed. */
    max_requests_per_socket: positiveInt.default(1_000),
    /**
     * The console is reached over https (through a proxy that terminates TLS): its session
     * cookie is always `Secure`. Otherwise it is `Secure` when the request itself came over https.
     */
    console_secure_cookie: z.boolean().default(false),
    /**
     * Peers whose `X-Forwarded-For` is believed (CIDR blocks): the client address so found is
     * the one every rule uses, allowlists, throttles, sessions, audit and logs
     * (auth/client-address.ts, docs/security.md). Empty: the socket's address is the client's.
     */
    trusted_proxies: z
      .array(z.string())
      .default([])
      .superRefine((value, context) => {
        if (value.length === 0) return;
        const parsed = parseCidrList(value);
        if ('problem' in parsed) context.addIssue({ code: 'custom', message: parsed.problem });
      }),
    /**
     * Operators must have signed in with a TOTP second factor to use the operator pages
     * (docs/console.md, "Second factor"); members may still add one.
     */
    console_require_operator_totp: z.boolean().default(false),
    /**
     * The environment variable holding the secret that keys the public links of shares asked
     * for from the console (docs/shares.md, "The token"). Unset: a secret generated once in the
     * data directory (`share-link-secret`), which several instances do not share.
     */
    share_link_secret_env: z
      .string()
      .regex(/^[A-Z_][A-Z0-9_]*$/)
      .default('TOLLGATE_SHARE_LINK_SECRET'),
    /**
     * Anyone may create an account and its member user from the console's sign-up page
     * (`POST /console/api/signup`, docs/console.md "Self sign-up"); otherwise only an operator's
     * invitation opens the console.
     */
    console_self_signup: z.boolean().default(false),
    /**
     * Console emails that differ only by a `+tag` (`alice+x@example.com`) are one mailbox:
     * sign-up and invitations refuse a second user for it (docs/console.md, "Emails"). Off by
     * default: not every mail system delivers `+tags` to the same mailbox. Case and Unicode
     * lookalikes (NFKC) are always one address.
     */
    console_email_ignore_plus_tags: z.boolean().default(false),
    /**
     * Graceful shutdown (SIGTERM): how long `/readyz` answers 503 while the port still accepts,
     * so a load balancer that polls it stops routing here before connections are refused.
     */
    shutdown_drain_delay_ms: nonNegativeInt.default(0),
    /** Then how long requests, streams and task steps in flight may take to finish before they are cut off. */
    shutdown_grace_ms: nonNegativeInt.default(30_000),
  })
  .strict();

/** PostgreSQL connection behaviour (ignored on SQLite). */
export const postgresSettingsSchema = z
  .object({
    /**
     * Send the hot path's statements as named prepared statements (store/database.ts): faster,
     * but broken behind PgBouncer in transaction pooling before 1.21, where a connection's
     * prepared statements do not follow the client. `false` sends every statement unnamed.
     */
    named_statements: z.boolean().default(true),
    /**
     * Take the holds and captures of one account's requests in one transaction per event-loop
     * turn on each instance (requests/batched-admission.ts, batched-capture.ts) instead of one
     * transaction each, which queue on the account's row. `false` only to compare.
     */
    batch_money: z.boolean().default(true),
  })
  .strict();

/** Where asset bytes live: local files (one instance) or an S3-compatible bucket (shared). */
export const storageSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('local') }).strict(),
  z
    .object({
      kind: z.literal('s3'),
      endpoint: z.url().optional(),
      region: z.string().min(1).default('us-east-1'),
      bucket: z.string().min(3),
      prefix: z.string().default(''),
      force_path_style: z.boolean().default(false),
      access_key_id_env: z.string().regex(/^[A-Z_][A-Z0-9_]*$/),
      secret_access_key_env: z.string().regex(/^[A-Z_][A-Z0-9_]*$/),
    })
    .strict(),
]);

export const configSchema = z
  .object({
    upstreams: z.record(z.string(), upstreamSchema),
    models: z.array(modelSchema),
    // `prefault` parses the empty object, so every field default above applies (zod 4).
    limits: limitsSchema.prefault({}),
    server: serverSchema.prefault({}),
    storage: storageSchema.default({ kind: 'local' }),
    postgres: postgresSettingsSchema.prefault({}),
    /** The task worker, claims and task windows (config/task-engine-schema.ts). */
    tasks: taskEngineSchema.prefault({}),
    /** How long an API key lookup is trusted by other instances (see docs/keys.md). */
    key_cache_ttl_ms: nonNegativeInt.default(10_000),
    /** How long request records are kept for idempotent replay and recovery. */
    request_retention_days: positiveInt.default(30),
    /** Where budget windows turn over: local midnight in this IANA zone (docs/billing.md). */
    budget_time_zone: z
      .string()
      .refine(isKnownTimeZone, { message: 'must be an IANA time zone such as Asia/Shanghai' })
      .default(DEFAULT_BUDGET_TIME_ZONE),
  })
  .strict()
  .superRefine((config, context) => {
    const seen = new Set<string>();
    const seenChannels = new Map<string, 'implicit' | 'explicit'>();
    config.models.forEach((model, index) => {
      if (seen.has(model.id)) {
        context.addIssue({
          code: 'custom',
          path: ['models', index, 'id'],
          message: `duplicate model id ${model.id}`,
        });
      }
      seen.add(model.id);
      for (const issue of channelIssues(model, config.upstreams, seenChannels)) {
        context.addIssue({
          code: 'custom',
          path: ['models', index, ...issue.path],
          message: issue.message,
        });
      }
      for (const issue of [
        ...modelPriceIssues(model, model.prices, 'config'),
        ...zeroPriceIssues(model.prices, model.free, 'config'),
      ]) {
        context.addIssue({
          code: 'custom',
          path: ['models', index, ...issue.path],
          message: issue.message,
        });
      }
    });
  });

export type ConfigFile = z.input<typeof configSchema>;
export type Config = z.output<typeof configSchema>;
export type ModelConfig = z.output<typeof modelSchema>;
export type ChannelConfig = z.output<typeof channelSchema>;
export type UpstreamConfig = z.output<typeof upstreamSchema>;

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

/** Whether an upstream's task adapters look unanswered submissions up (`task_lookup`, default per kind). */
export const taskLookupOf = (upstream: Pick<UpstreamConfig, 'kind' | 'task_lookup'>): boolean =>
  upstream.task_lookup ?? upstream.kind === 'simulator';
export type TokenPrices = z.output<typeof tokenPricesSchema>;
export type TaskPrices = z.output<typeof taskPricesSchema>;
export type ModelPrices = z.output<typeof modelPricesSchema>;
export type ServerLimits = z.output<typeof serverSchema>;
export type StorageConfig = z.output<typeof storageSchema>;
export type Family = z.output<typeof familySchema>;
export type Feature = z.output<typeof featureSchema>;
export type H3Resolution = z.output<typeof h3ResolutionSchema>;
export type H3VideoSource = z.output<typeof h3VideoSourceSchema>;
export type H3Closed = z.output<typeof h3ClosedSchema>;
