import path from 'node:path';
import type { Settings } from '../config/load.js';
import type { UpstreamConfig } from '../config/schema.js';
import { describeDatabase, type DatabaseTarget } from './database-target.js';

/**
 * What a gateway that has just started serves, and from where: printed for a person on a
 * terminal (`describeStartup`), logged as fields of the `tollgate listening` line otherwise.
 * Nothing here may hold a secret: database and Redis URLs lose their credentials, upstreams show
 * only where they are, the admin token only whether it is set.
 */
export interface StartupFacts {
  /** The API's base URL. */
  readonly url: string;
  /** The web console's URL, once the gateway serves one. */
  readonly consoleUrl: string | undefined;
  /** The admin API's base URL; `undefined` while it is off (no `TOLLGATE_ADMIN_TOKEN`). */
  readonly adminUrl: string | undefined;
  readonly metricsUrl: string;
  /** Whether `/metrics` asks for `TOLLGATE_METRICS_TOKEN`. */
  readonly metricsProtected: boolean;
  readonly database: string;
  readonly storage: string;
  readonly rateLimits: string;
  readonly config: string;
  /** `name (where)`, in the configuration's order. */
  readonly upstreams: readonly string[];
  /** Model ids, in the configuration's order. */
  readonly models: readonly string[];
  /** Models whose configured prices this start left alone (they differ from the store's). */
  readonly pricesToSync: readonly string[];
}

/** Names shown before "and N more": a large catalogue must not flood the terminal. */
const LISTED = 10;

export function startupFacts(
  settings: Settings,
  listening: { readonly host: string; readonly port: number },
  database: DatabaseTarget,
  consolePath?: string,
  pricesToSync: readonly string[] = [],
): StartupFacts {
  const host = listening.host.includes(':') ? `[${listening.host}]` : listening.host;
  const origin = `http://${host}:${listening.port}`;
  const storage = settings.config.storage;
  return {
    url: `${origin}/v1`,
    consoleUrl: consolePath === undefined ? undefined : `${origin}${consolePath}`,
    adminUrl: settings.adminToken === undefined ? undefined : `${origin}/admin/v1`,
    metricsUrl: `${origin}/metrics`,
    metricsProtected: settings.metricsToken !== undefined,
    database: describeDatabase(database),
    storage:
      storage.kind === 'local'
        ? `local files under ${path.join(settings.dataDir, 'assets')}`
        : `S3 bucket ${storage.bucket}${storage.prefix === '' ? '' : `/${storage.prefix}`}` +
          ` at ${storage.endpoint === undefined ? `AWS ${storage.region}` : withoutCredentials(storage.endpoint)}`,
    rateLimits:
      settings.redisUrl === undefined
        ? 'in memory (this instance only)'
        : `Redis at ${withoutCredentials(settings.redisUrl)}`,
    config: settings.configSource,
    upstreams: Object.entries(settings.config.upstreams).map(
      ([name, upstream]) => `${name} (${upstreamPlace(upstream)})`,
    ),
    models: settings.config.models.map((model) => model.id),
    pricesToSync,
  };
}

/** The summary a person sees on a terminal, ending with a newline. */
export function describeStartup(facts: StartupFacts): string {
  const rows: [string, string][] = [
    ['database', facts.database],
    ['asset files', facts.storage],
    ['rate limits', facts.rateLimits],
    ['config', facts.config],
    ['upstreams', counted(facts.upstreams)],
    ['models', counted(facts.models)],
    ...(facts.pricesToSync.length === 0
      ? []
      : [
          [
            'prices',
            `the configuration's prices differ from the stored ones for ${counted(facts.pricesToSync)}; ` +
              'the stored ones stay current (tollgate prices sync applies the configuration)',
          ] satisfies [string, string],
        ]),
    [
      'admin API',
      facts.adminUrl === undefined
        ? 'off: set TOLLGATE_ADMIN_TOKEN (16 characters or more) to turn it on'
        : `on at ${facts.adminUrl} (token: TOLLGATE_ADMIN_TOKEN)`,
    ],
    [
      'metrics',
      facts.metricsProtected
        ? `${facts.metricsUrl}, bearer token TOLLGATE_METRICS_TOKEN`
        : `${facts.metricsUrl}, open to anyone who reaches it (TOLLGATE_METRICS_TOKEN protects it)`,
    ],
    ['logs', 'readable lines on this terminal; LOG_FORMAT=json for JSON lines'],
  ];
  if (facts.consoleUrl !== undefined) rows.unshift(['console', facts.consoleUrl]);
  const width = Math.max(...rows.map(([label]) => label.length));
  return [
    `Tollgate is listening on ${facts.url}`,
    ...rows.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`),
    'Stop it with Ctrl-C.',
    '',
  ].join('\n');
}

function counted(names: readonly string[]): string {
  if (names.length === 0) return 'none';
  const shown = names.slice(0, LISTED).join(', ');
  const more = names.length > LISTED ? ` and ${names.length - LISTED} more` : '';
  return `${names.length}: ${shown}${more}`;
}

function upstreamPlace(upstream: UpstreamConfig): string {
  if (upstream.kind === 'simulator') return 'built-in simulator';
  return `${upstream.kind} at ${upstream.base_url === undefined ? '?' : withoutCredentials(upstream.base_url)}`;
}

/** `scheme://host:port/path`, without user, password, query or fragment. */
function withoutCredentials(url: string): string {
  if (!URL.canParse(url)) return '(unparsable URL)';
  const parsed = new URL(url);
  const pathname = parsed.pathname === '/' ? '' : parsed.pathname;
  return `${parsed.protocol}//${parsed.host}${pathname}`;
}
