import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadSettings } from '../../src/config/load.js';
import { defaultConfig } from '../../src/config/default-config.js';
import { humanLine } from '../../src/logger.js';
import { databaseTarget } from '../../src/startup/database-target.js';
import { parseLogOptions } from '../../src/startup/log-options.js';
import { describeStartup, startupFacts } from '../../src/startup/startup-summary.js';
import { defaultDatabaseUrl } from '../../src/services.js';

function summaryFor(env: Record<string, string>, port = 8080): string {
  const settings = loadSettings(env);
  const database = databaseTarget(settings.databaseUrl ?? defaultDatabaseUrl(settings.dataDir));
  return describeStartup(startupFacts(settings, { host: settings.host, port }, database));
}

/**
 * A newcomer's first start printed only JSON and left out what they needed to go on: where it
 * listens, which database file or server, what it loaded, whether the admin API is on and how
 * to turn it on. The summary says all that, and, printed on a terminal that may be shared or
 * recorded, never a credential.
 */
describe('the start-up summary on a terminal', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('the embedded default: where it listens, the SQLite file, what it loaded, how to turn the admin API on', () => {
    const summary = summaryFor({ TOLLGATE_DATA_DIR: '/srv/tollgate' });
    expect(summary.split('\n')).toEqual([
      'Tollgate is listening on http://127.0.0.1:8080/v1',
      '  database     SQLite file /srv/tollgate/tollgate.sqlite',
      '  asset files  local files under /srv/tollgate/assets',
      '  rate limits  in memory (this instance only)',
      '  config       built-in default',
      '  upstreams    1: simulator (built-in simulator)',
      `  models       8: ${defaultConfig.models.map((model) => model.id).join(', ')}`,
      '  admin API    off: set TOLLGATE_ADMIN_TOKEN (16 characters or more) to turn it on',
      '  metrics      http://127.0.0.1:8080/metrics, open to anyone who reaches it (TOLLGATE_METRICS_TOKEN protects it)',
      '  logs         readable lines on this terminal; LOG_FORMAT=json for JSON lines',
      'Stop it with Ctrl-C.',
      '',
    ]);
  });

  it('PostgreSQL, Redis, S3 and a real upstream: where each is, never a password or token', () => {
    dir = mkdtempSync(path.join(tmpdir(), 'tollgate-summary-'));
    const file = path.join(dir, 'tollgate.json');
    writeFileSync(
      file,
      JSON.stringify({
        ...defaultConfig,
        upstreams: {
          ...defaultConfig.upstreams,
          deepseek: {
            kind: 'openai',
            base_url: 'https://user:url-password@api.example.com/v1?key=query-secret',
            api_key_env: 'DEEPSEEK_KEY',
          },
        },
        storage: {
          kind: 's3',
          endpoint: 'https://minio.internal:9000',
          bucket: 'tollgate-assets',
          prefix: 'prod',
          access_key_id_env: 'S3_ID',
          secret_access_key_env: 'S3_SECRET',
        },
      }),
    );
    const secrets = {
      TOLLGATE_ADMIN_TOKEN: 'admin-token-0123456789',
      TOLLGATE_METRICS_TOKEN: 'metrics-token-0123456789',
      DEEPSEEK_KEY: 'sk-upstream-secret',
      S3_ID: 'AKIAEXAMPLE',
      S3_SECRET: 's3-secret-value',
    };
    const summary = summaryFor(
      {
        ...secrets,
        HOST: '0.0.0.0',
        TOLLGATE_CONFIG: file,
        TOLLGATE_DATABASE_URL: 'postgres://tollgate:db-password@db.internal:6543/payments',
        TOLLGATE_REDIS_URL: 'redis://:redis-password@cache.internal:6380/2',
      },
      9090,
    );
    expect(summary).toContain('Tollgate is listening on http://0.0.0.0:9090/v1\n');
    expect(summary).toContain(
      '  database     PostgreSQL database payments on db.internal:6543 as tollgate\n',
    );
    expect(summary).toContain(
      '  asset files  S3 bucket tollgate-assets/prod at https://minio.internal:9000\n',
    );
    expect(summary).toContain('  rate limits  Redis at redis://cache.internal:6380/2\n');
    expect(summary).toContain(`  config       ${file}\n`);
    expect(summary).toContain(
      '  upstreams    2: simulator (built-in simulator), deepseek (openai at https://api.example.com/v1)\n',
    );
    expect(summary).toContain(
      '  admin API    on at http://0.0.0.0:9090/admin/v1 (token: TOLLGATE_ADMIN_TOKEN)\n',
    );
    expect(summary).toContain(
      '  metrics      http://0.0.0.0:9090/metrics, bearer token TOLLGATE_METRICS_TOKEN\n',
    );
    for (const secret of [
      ...Object.values(secrets),
      'db-password',
      'redis-password',
      'url-password',
      'query-secret',
    ])
      expect(summary).not.toContain(secret);
  });

  it('a large catalogue is counted, not listed in full', () => {
    const settings = loadSettings({});
    const [defaultModel] = settings.config.models;
    if (defaultModel === undefined) throw new Error('the default configuration has models');
    const many = {
      ...settings,
      config: { ...settings.config, models: [] as typeof settings.config.models },
    };
    for (let index = 0; index < 25; index += 1)
      many.config.models.push({ ...defaultModel, id: `model-${index}` });
    const facts = startupFacts(many, { host: '::1', port: 8080 }, databaseTarget(':memory:'));
    const summary = describeStartup(facts);
    expect(summary).toContain('Tollgate is listening on http://[::1]:8080/v1\n');
    expect(summary).toContain(
      '  models       25: model-0, model-1, model-2, model-3, model-4, model-5, model-6, model-7, model-8, model-9 and 15 more\n',
    );
  });
  it('names the models whose configured prices the start left alone, and what applies them', () => {
    const settings = loadSettings({});
    const facts = startupFacts(
      settings,
      { host: '127.0.0.1', port: 8080 },
      databaseTarget(':memory:'),
      undefined,
      ['sim-embed'],
    );
    expect(describeStartup(facts)).toContain(
      "  prices       the configuration's prices differ from the stored ones for 1: sim-embed; the stored ones stay current (tollgate prices sync applies the configuration)\n",
    );
    expect(describeStartup({ ...facts, pricesToSync: [] })).not.toContain('  prices ');
  });
});

/**
 * Machines reading the logs must get JSON lines without asking (a file, a pipe, a collector);
 * a person at a terminal gets the summary and readable lines. A mistyped LOG_FORMAT or
 * LOG_LEVEL stops the start with the variable named.
 */
describe('which log format a start uses', () => {
  it('human on a terminal, JSON anywhere else, LOG_FORMAT wins', () => {
    const unset = { level: undefined, format: undefined };
    expect(parseLogOptions(unset, true)).toEqual({ level: 'info', format: 'human' });
    expect(parseLogOptions(unset, false)).toEqual({ level: 'info', format: 'json' });
    expect(parseLogOptions({ level: 'warn', format: 'json' }, true)).toEqual({
      level: 'warn',
      format: 'json',
    });
    expect(parseLogOptions({ level: '', format: 'human' }, false)).toEqual({
      level: 'info',
      format: 'human',
    });
  });

  it('an unknown value names the variable', () => {
    expect(() => parseLogOptions({ level: undefined, format: 'pretty' }, true)).toThrow(
      new ConfigError('invalid environment variable LOG_FORMAT: must be json or human'),
    );
    expect(() => parseLogOptions({ level: 'verbose', format: undefined }, true)).toThrow(
      /^invalid environment variable LOG_LEVEL: must be one of fatal, error/,
    );
  });

  it('a human log line: time, level, message, fields; an error by its type and message', () => {
    const time = new Date(2026, 0, 2, 14, 3, 7).getTime();
    expect(
      humanLine(
        `${JSON.stringify({
          level: 50,
          time,
          pid: 1,
          hostname: 'h',
          msg: 'sweep failed',
          err: { type: 'Error', message: 'disk full', stack: 'Error: disk full\n    at x' },
          stale: 2,
          path: '/v1/a b',
        })}\n`,
      ),
    ).toBe('14:03:07 ERROR sweep failed error="Error: disk full" stale=2 path="/v1/a b"\n');
    expect(humanLine('not json\n')).toBe('not json\n');
  });
});
