import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { defaultConfig } from './default-config.js';
import { crossFieldIssues } from './cross-field-issues.js';
import { configSchema, type Config } from './schema.js';

/**
 * Shortest share-link secret accepted from the environment: 32 characters, as a generated one's
 * 256 bits (shares/share-link-secret.ts generates one when the environment gives none).
 */
export const SHARE_LINK_SECRET_MIN_LENGTH = 32;

/** Everything the process takes from its environment, read once, validated, frozen. */
export interface Settings {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  /** `undefined` means the embedded SQLite file under `dataDir`. */
  readonly databaseUrl: string | undefined;
  readonly redisUrl: string | undefined;
  /**
   * Whether this process applies pending migrations itself (`TOLLGATE_MIGRATE_ON_START`; by
   * default on for SQLite, the one-process quick start, and off for PostgreSQL, where
   * `tollgate migrate` runs once before instances start: docs/deploy.md, "Migrations").
   */
  readonly migrateOnStart: boolean;
  /** `undefined` disables the admin HTTP API. */
  readonly adminToken: string | undefined;
  /** When set, `/metrics` answers only `Authorization: Bearer <token>` (docs/operations.md). */
  readonly metricsToken: string | undefined;
  readonly configSource: string;
  readonly config: Config;
  /** Secrets named by upstreams' `api_key_env`, resolved from the environment. */
  readonly upstreamKeys: Readonly<Record<string, string>>;
  /** S3 credentials named by `storage.*_env`, when the storage is S3. */
  readonly storageSecrets: { accessKeyId: string; secretAccessKey: string } | undefined;
  /**
   * The share-link secret from the variable `server.share_link_secret_env` names; `undefined`:
   * one is generated in `dataDir` (shares/share-link-secret.ts).
   */
  readonly shareLinkSecret: string | undefined;
  /** STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET, both or neither (docs/payments.md). */
  readonly stripe: { secretKey: string; webhookSecret: string } | undefined;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * Validates a configuration object. The error lists every problem at once, one line each with
 * its dotted path: the fields' own, then the cross-field rules' (cross-field-issues.ts).
 */
export function parseConfig(raw: unknown, source: string): Config {
  const result = configSchema.safeParse(raw);
  if (!result.success) {
    const lines = [...result.error.issues, ...crossFieldIssues(raw)].map((issue) => {
      const field = issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)';
      return `  ${field}: ${issue.message}`;
    });
    const unique = [...new Set(lines)];
    throw new ConfigError(`invalid configuration in ${source}:\n${unique.join('\n')}`);
  }
  return deepFreeze(result.data);
}

export function readConfigFile(file: string): Config {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`cannot read configuration file ${file}: ${(error as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(
      `configuration file ${file} is not valid JSON: ${(error as Error).message}`,
    );
  }
  return parseConfig(raw, file);
}

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65_535).default(8080),
  HOST: z.string().min(1).default('127.0.0.1'),
  TOLLGATE_DATA_DIR: z.string().min(1).default('./data'),
  TOLLGATE_CONFIG: z.string().min(1).optional(),
  TOLLGATE_DATABASE_URL: z
    .string()
    .regex(/^(postgres(ql)?:\/\/|sqlite:)/, 'must be a postgres:// URL or sqlite:PATH')
    .optional(),
  TOLLGATE_REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// URL')
    .optional(),
  TOLLGATE_MIGRATE_ON_START: z
    .enum(['1', '0', 'true', 'false'], { message: 'must be 1 or 0 (true or false)' })
    .transform((value) => value === '1' || value === 'true')
    .optional(),
  TOLLGATE_ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  TOLLGATE_METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  // Online top-up (docs/payments.md): enabled when both are set.
  STRIPE_SECRET_KEY: z
    .string()
    .regex(/^(sk|rk)_(test|live)_/, 'must be a Stripe secret key (sk_live_…, sk_test_… or rk_…)')
    .optional(),
  STRIPE_WEBHOOK_SECRET: z
    .string()
    .regex(/^whsec_/, 'must be the webhook signing secret (whsec_…)')
    .optional(),
});

/** The only place that reads `process.env` (callers pass it in). */
export function loadSettings(env: NodeJS.ProcessEnv): Settings {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    throw problemsError(
      parsed.error.issues.map((issue) => `${String(issue.path[0])}: ${issue.message}`),
      (problem) => `invalid environment variable ${problem}`,
      'invalid environment variables',
    );
  }
  const values = parsed.data;
  if ((values.STRIPE_SECRET_KEY === undefined) !== (values.STRIPE_WEBHOOK_SECRET === undefined))
    throw new ConfigError(
      'online top-up needs both STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET (or neither): without the webhook secret no payment could be verified',
    );
  const config =
    values.TOLLGATE_CONFIG === undefined
      ? parseConfig(defaultConfig, 'the built-in default configuration')
      : readConfigFile(values.TOLLGATE_CONFIG);
  // Every secret the file names is looked up before any is reported, so all show at once.
  const unset: string[] = [];
  const secret = (field: string, variable: string): string => {
    const value = env[variable];
    // Set but empty is its own mistake (an `export KEY=` with the value lost): say which.
    if (value === undefined) unset.push(`${field}: environment variable ${variable} is not set`);
    else if (value === '') unset.push(`${field}: environment variable ${variable} is empty`);
    return value ?? '';
  };
  const upstreamKeys: Record<string, string> = {};
  for (const [name, upstream] of Object.entries(config.upstreams)) {
    if (upstream.api_key_env === undefined) continue;
    upstreamKeys[name] = secret(`upstreams.${name}.api_key_env`, upstream.api_key_env);
  }
  let storageSecrets: Settings['storageSecrets'];
  if (config.storage.kind === 's3') {
    storageSecrets = {
      accessKeyId: secret('storage.access_key_id_env', config.storage.access_key_id_env),
      secretAccessKey: secret(
        'storage.secret_access_key_env',
        config.storage.secret_access_key_env,
      ),
    };
  }
  const shareLinkVariable = config.server.share_link_secret_env;
  const shareLinkSecret = cleaned[shareLinkVariable];
  if (shareLinkSecret !== undefined && shareLinkSecret.length < SHARE_LINK_SECRET_MIN_LENGTH)
    unset.push(
      `server.share_link_secret_env: environment variable ${shareLinkVariable} is shorter than ${SHARE_LINK_SECRET_MIN_LENGTH} characters`,
    );
  if (unset.length > 0)
    throw problemsError(
      unset,
      (problem) => problem,
      'environment variables named by the configuration are not set or empty',
    );
  return Object.freeze({
    port: values.PORT,
    host: values.HOST,
    dataDir: path.resolve(values.TOLLGATE_DATA_DIR),
    databaseUrl: values.TOLLGATE_DATABASE_URL,
    redisUrl: values.TOLLGATE_REDIS_URL,
    migrateOnStart:
      values.TOLLGATE_MIGRATE_ON_START ??
      !(values.TOLLGATE_DATABASE_URL ?? '').startsWith('postgres'),
    adminToken: values.TOLLGATE_ADMIN_TOKEN,
    metricsToken: values.TOLLGATE_METRICS_TOKEN,
    configSource: values.TOLLGATE_CONFIG ?? 'built-in default',
    config,
    upstreamKeys: Object.freeze(upstreamKeys),
    storageSecrets,
    shareLinkSecret,
    stripe:
      values.STRIPE_SECRET_KEY === undefined || values.STRIPE_WEBHOOK_SECRET === undefined
        ? undefined
        : { secretKey: values.STRIPE_SECRET_KEY, webhookSecret: values.STRIPE_WEBHOOK_SECRET },
  });
}

/** One problem: one line (`single`); several: `header`, then one indented line each. */
function problemsError(
  problems: readonly string[],
  single: (problem: string) => string,
  header: string,
): ConfigError {
  const [first] = problems;
  return problems.length === 1 && first !== undefined
    ? new ConfigError(single(first))
    : new ConfigError(`${header}:\n${problems.map((problem) => `  ${problem}`).join('\n')}`);
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
