import { parseCidrList } from '../util/ip-allowlist.js';
import { DEFAULT_BUDGET_TIME_ZONE, isKnownTimeZone } from './time-zone.js';
import { z } from 'zod';
import { channelIssues } from './channel-rules.js';
import { modelPriceIssues, zeroPriceIssues } from './price-rules.js';
import { taskEngineSchema } from './task-engine-schema.js';
import { modelSchema, upstreamSchema } from './model-schema.js';

export * from './model-schema.js';

// The price objects (price-schema.ts), named here too: importers take the whole configuration's
// schema from this one file.
export * from './price-schema.js';

/**
 * The configuration file's schema (the price objects: price-schema.ts). Every amount is an integer number of micro-yuan; every price
 * is per unit named in its field (per 1 000 000 tokens, per image, per second). Secrets never appear here: an upstream
 * names the environment variable that holds its key (`api_key_env`).
 */

const positiveInt = z.number().int().positive();
const nonNegativeInt = z.number().int().nonnegative();

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

/** How the request path keeps its accounts (docs/decisions/0019-hot-path-event-log.md). */
export const accountingSchema = z
  .object({
    /**
     * The text routes' plain claims and every finish write one event each to the log, and a
     * projector in each instance writes their records, holds and journal entries from it
     * (docs/event-log.md). Off (the default), they write those rows directly. On PostgreSQL it
     * needs `postgres.batch_money: false` (the batched paths are not on the log yet).
     */
    event_log: z.boolean().default(false),
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
    accounting: accountingSchema.prefault({}),
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

export type ServerLimits = z.output<typeof serverSchema>;
export type StorageConfig = z.output<typeof storageSchema>;
