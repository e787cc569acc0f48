import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import { parseConfig } from '../../src/config/load.js';
import { buildApp } from '../../src/http/app.js';
import { createServices, defaultDatabaseUrl, type Services } from '../../src/services.js';
import { ADMIN_TOKEN } from '../helpers/gateway.js';
import { cliIn } from '../helpers/processes.js';
import { finishedRequest, unknownOutcome } from '../helpers/records.js';

/**
 * The risk: an operator scripts against the CLI, then against the admin API (or the other way
 * round), and the same resource comes back in another shape — a bare array instead of the list
 * object, camelCase instead of snake_case. Both read one SQLite file here and must print the
 * same JSON (docs/api-conventions.md).
 */
describe('the CLI prints what the admin API answers', () => {
  let dataDir: string;
  let services: Services;
  let app: FastifyInstance;
  let accountId: string;

  const admin = async (method: 'GET' | 'POST' | 'PUT', url: string, body?: object) => {
    const response = await app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      ...(body === undefined ? {} : { payload: body }),
    });
    expect(response.statusCode, response.body).toBeLessThan(300);
    return response.json<unknown>();
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'tollgate-cli-http-'));
    services = await createServices({
      config: parseConfig(defaultConfig, 'test'),
      databaseUrl: defaultDatabaseUrl(dataDir),
      assetsDir: path.join(dataDir, 'assets'),
      adminToken: ADMIN_TOKEN,
      upstreams: false,
    });
    app = await buildApp(services);
    const account = (await admin('POST', '/admin/v1/accounts', {
      email: 'shapes@example.test',
    })) as { id: string };
    accountId = account.id;
    await admin('POST', `/admin/v1/accounts/${accountId}/keys`, { kind: 'personal' });
    await admin('POST', `/admin/v1/accounts/${accountId}/keys`, { kind: 'service' });
  });
  afterAll(async () => {
    await app.close();
    await services.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('accounts list: the same page, with the same filters', async () => {
    const http = await admin('GET', '/admin/v1/accounts?q=SHAPES&limit=5');
    const printed = await cliIn(dataDir, 'accounts', 'list', '--q', 'SHAPES', '--limit', '5');
    expect(printed.code).toBe(0);
    expect(printed.json).toEqual(http);
    expect(printed.json).toMatchObject({ object: 'list', has_more: false });
    const prefix = accountId.slice(0, 8);
    expect((await cliIn(dataDir, 'accounts', 'list', '--id-prefix', prefix)).json).toEqual(
      await admin('GET', `/admin/v1/accounts?id_prefix=${prefix}`),
    );
  });

  it('keys list: the list object, not a bare array', async () => {
    const http = await admin('GET', `/admin/v1/accounts/${accountId}/keys`);
    const cli = await cliIn(dataDir, 'keys', 'list', accountId);
    expect(cli.code).toBe(0);
    expect(cli.json).toEqual(http);
    expect(cli.json).toMatchObject({ object: 'list', data: expect.any(Array) as unknown });
    expect(cli.json['data']).toHaveLength(2);
  });

  it('keys list of an account without keys: an empty list object', async () => {
    const empty = (await admin('POST', '/admin/v1/accounts', {
      email: 'no-keys@example.test',
    })) as { id: string };
    const cli = await cliIn(dataDir, 'keys', 'list', empty.id);
    expect(cli.json).toEqual({ object: 'list', data: [] });
  });

  it('prices set and prices history: snake_case, as the admin API answers them', async () => {
    const set = await cliIn(
      dataDir,
      'prices',
      'set',
      'sim-embed',
      '--json',
      '{"input_per_million_tokens": 700000}',
    );
    expect(set.code).toBe(0);
    expect(set.json).toEqual({
      object: 'model_prices',
      model: 'sim-embed',
      price_version: 'sim-embed@2',
      prices: { input_per_million_tokens: 700_000 },
      created_at: expect.any(String) as unknown,
    });
    const viaHttp = await admin('PUT', '/admin/v1/models/sim-embed/prices', {
      input_per_million_tokens: 800_000,
    });
    expect(Object.keys(viaHttp as object).sort()).toEqual(Object.keys(set.json).sort());

    const history = await cliIn(dataDir, 'prices', 'history', 'sim-embed');
    expect(history.json).toEqual(await admin('GET', '/admin/v1/models/sim-embed/prices'));
    expect(history.json).toMatchObject({
      object: 'list',
      data: [
        { price_version: 'sim-embed@3' },
        { price_version: 'sim-embed@2' },
        { price_version: 'sim-embed@1' },
      ],
    });
  });

  it('unresolved: the operator queue, its totals to the micro-yuan and its records, as GET /admin/v1/unresolved', async () => {
    const { key } = (await admin('POST', `/admin/v1/accounts/${accountId}/keys`, {
      kind: 'personal',
    })) as { key: string };
    await admin('POST', `/admin/v1/accounts/${accountId}/topups`, {
      amount: 1_000_000,
      reference: 'unresolved-queue',
    });
    const ids = [
      await finishedRequest(services, { key, hold: 11_111, outcome: unknownOutcome }),
      await finishedRequest(services, { key, hold: 22_222, outcome: unknownOutcome }),
    ];
    const cli = await cliIn(dataDir, 'unresolved');
    const http = await admin('GET', '/admin/v1/unresolved');
    expect(cli.code).toBe(0);
    // Read a moment apart: the ages in whole seconds may differ by one, nothing else may.
    expect(withoutAges(cli.json)).toEqual(withoutAges(http));
    expect(cli.json).toMatchObject({
      object: 'unresolved',
      total: { count: 2, held: 33_333 },
      requests: { count: 2, held: 33_333 },
      tasks: { count: 0, held: 0, data: [] },
    });
    const records = (cli.json['requests'] as { data: { id: string }[] }).data;
    expect(records.map((record) => record.id).sort()).toEqual([...ids].sort());
  });

  it('channels disable, list and enable: one disabled list shared with the running gateway', async () => {
    const disabled = await cliIn(
      dataDir,
      'channels',
      'disable',
      'sim-embed~0',
      '--reason',
      'maint',
    );
    expect(disabled.code).toBe(0);
    expect(disabled.json).toMatchObject({ id: 'sim-embed~0', disabled: true });
    // The gateway reads the same database: its admin API sees the CLI's change.
    const http = await admin('GET', '/admin/v1/channels');
    expect((await cliIn(dataDir, 'channels', 'list')).json).toEqual(http);
    expect(http).toMatchObject({ object: 'list' });
    const embed = (http as { data: { id: string; disabled: boolean }[] }).data.find(
      (channel) => channel.id === 'sim-embed~0',
    );
    expect(embed?.disabled).toBe(true);
    const enabled = await cliIn(dataDir, 'channels', 'enable', 'sim-embed~0');
    expect(enabled.json).toMatchObject({ id: 'sim-embed~0', disabled: false });
    const unknown = await cliIn(dataDir, 'channels', 'enable', 'no-such-channel');
    expect(unknown.code).not.toBe(0);
    expect(unknown.json).toMatchObject({ error: { code: 'NOT_FOUND' } });
  });
});

/** The queue with every `oldest_age_seconds` taken out (it moves with the clock). */
function withoutAges(queue: unknown): unknown {
  return JSON.parse(
    JSON.stringify(queue, (name, value: unknown) =>
      name === 'oldest_age_seconds' ? undefined : value,
    ),
  ) as unknown;
}
