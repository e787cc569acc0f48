import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  BudgetTimeZoneMismatch,
  changeBudgetTimeZone,
  storedBudgetTimeZone,
} from '../../src/budgets/budget-time-zone.js';
import type { ConfigFile } from '../../src/config/schema.js';
import { openStore } from '../../src/store/database.js';
import { describeEachDialect } from '../helpers/dialects.js';
import {
  manualClock,
  oneMicroYuanEmbeddingsConfig,
  startGateway,
  type TestGateway,
} from '../helpers/gateway.js';
import { cliWithEnv } from '../helpers/processes.js';
import { sharedDatabase } from '../helpers/shared-database.js';

/** Each small embeddings request holds and costs exactly 1 micro-yuan. */
const shanghai = oneMicroYuanEmbeddingsConfig();
const utc: ConfigFile = { ...shanghai, budget_time_zone: 'UTC' };

/**
 * The risk: instances counting budget windows in different zones reset each other's windows.
 * A budget row keeps the start of its window; an instance in another zone computes another
 * start, takes the row's for an older window, counts its spend as 0: a spent daily budget
 * admits again through that instance (and, once it moved the start, through the other too). A
 * rolling change of `budget_time_zone` did exactly that. The zone is now the deployment's,
 * stored in the database: an instance configured otherwise refuses to start, naming the setting
 * and the stored zone, and a deliberate change carries every window's spend.
 */
describeEachDialect('one budget time zone for the deployment on $name', (dialect) => {
  const gateways: TestGateway[] = [];
  let remove = async () => {};
  afterEach(async () => {
    for (const gateway of gateways.splice(0)) {
      await gateway.expectLedgerClean();
      await gateway.close();
    }
    await remove();
  });

  function shared(): { databaseUrl: string; postgresSchema?: string } {
    const database = sharedDatabase(dialect);
    remove = database.remove;
    return database.services;
  }

  const embed = (gateway: TestGateway, key: string) =>
    gateway.call('POST', '/v1/embeddings', { key, body: { model: 'sim-embed', input: 'hi' } });

  async function start(
    services: { databaseUrl: string; postgresSchema?: string },
    config: ConfigFile,
    clock: ReturnType<typeof manualClock>,
  ): Promise<TestGateway> {
    const gateway = await startGateway(dialect, { services, config, clock });
    gateways.push(gateway);
    return gateway;
  }

  /** A key whose daily budget of 3 is spent, on Monday 2026-11-23 18:00 in Shanghai (10:00 UTC). */
  async function spentKey(gateway: TestGateway) {
    const { accountId, key, keyId } = await gateway.account(1_000);
    await gateway.admin('PUT', `/admin/v1/keys/${keyId}/budget`, { limit: 3, window: 'daily' });
    for (let index = 0; index < 3; index += 1)
      expect((await embed(gateway, key)).statusCode).toBe(200);
    expect((await embed(gateway, key)).statusCode).toBe(402);
    return { accountId, key, keyId };
  }

  it('a second instance configured with another zone refuses to start, in one line naming budget_time_zone and the stored zone; the spent window stays spent', async () => {
    const services = shared();
    const clock = manualClock(Date.parse('2026-11-23T10:00:00Z'));
    const first = await start(services, shanghai, clock);
    const { key } = await spentKey(first);

    const refused = await startGateway(dialect, { services, config: utc, clock }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(BudgetTimeZoneMismatch);
    const message = (refused as Error).message;
    expect(message).not.toContain('\n');
    expect(message).toMatch(
      /^budget_time_zone is UTC in this configuration, but .* in Asia\/Shanghai/,
    );
    expect(message).toContain('tollgate budgets time-zone UTC');

    // Nothing moved: the window is still spent, and the deployment's zone is still Shanghai's.
    expect((await embed(first, key)).statusCode).toBe(402);
    expect(await storedBudgetTimeZone(first.services.store.db)).toBe('Asia/Shanghai');
    // The same zone starts as before.
    const second = await start(services, shanghai, clock);
    expect((await embed(second, key)).statusCode).toBe(402);
  });

  it('instances starting together on a fresh database agree on one zone: the other refuses', async () => {
    const services = shared();
    // Migrated first, alone (migrations are not what is tested): no zone recorded yet.
    const migrated = await openStore({ url: services.databaseUrl, ...schemaOf(services) });
    expect(await storedBudgetTimeZone(migrated.db)).toBeUndefined();
    await migrated.close();
    const clock = manualClock();
    const outcomes = await Promise.allSettled(
      [shanghai, utc].map((config) => start(services, config, clock)),
    );
    const started = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    const refused = outcomes.flatMap((outcome) =>
      outcome.status === 'rejected' ? [outcome.reason as unknown] : [],
    );
    expect(started).toHaveLength(1);
    expect(refused).toHaveLength(1);
    const [reason] = refused;
    expect(reason).toBeInstanceOf(BudgetTimeZoneMismatch);
    const winner = (started[0] as PromiseFulfilledResult<TestGateway>).value;
    expect((reason as BudgetTimeZoneMismatch).stored).toBe(
      await storedBudgetTimeZone(winner.services.store.db),
    );
  });

  it('a deliberate change carries each window’s spend into the new zone: no spent window reopens', async () => {
    const services = shared();
    // Sunday 2026-11-22 18:00 in Shanghai: a key spends 2 of its daily 5 (a window over by Monday).
    const clock = manualClock(Date.parse('2026-11-22T10:00:00Z'));
    const first = await start(services, shanghai, clock);
    const older = await first.account(1_000);
    await first.admin('PUT', `/admin/v1/keys/${older.keyId}/budget`, { limit: 5, window: 'daily' });
    for (let index = 0; index < 2; index += 1)
      expect((await embed(first, older.key)).statusCode).toBe(200);
    // Monday 18:00 in Shanghai (10:00 UTC): another key spends its whole daily 3, its account 4
    // of a monthly 10.
    clock.advance(86_400_000);
    const spent = await spentKey(first);
    await first.admin('PUT', `/admin/v1/accounts/${spent.accountId}/budget`, {
      limit: 10,
      window: 'monthly',
    });
    expect(
      (await first.admin('GET', `/admin/v1/accounts/${spent.accountId}`))['budget'],
    ).toMatchObject({ spent: 0 });
    const { key: second } = await first.newKey(spent.accountId);
    for (let index = 0; index < 4; index += 1)
      expect((await embed(first, second)).statusCode).toBe(200);
    await first.expectLedgerClean();
    await first.close();
    gateways.splice(0);

    // Every instance stopped, then the command (tollgate budgets time-zone UTC).
    const store = await openStore({ url: services.databaseUrl, ...schemaOf(services) });
    try {
      expect(
        await changeBudgetTimeZone(store.db, { zone: 'UTC', current: 'Asia/Shanghai' }, clock),
      ).toEqual({
        budget_time_zone: 'UTC',
        previous: 'Asia/Shanghai',
        carried: { accounts: 1, keys: 1 },
      });
      expect(await storedBudgetTimeZone(store.db)).toBe('UTC');
    } finally {
      await store.close();
    }

    const moved = await start(services, utc, clock);
    // The UTC day began at 00:00 UTC, after the Shanghai day: without the carry the key's spend
    // would belong to an older window and it would admit again.
    expect((await embed(moved, spent.key)).statusCode).toBe(402);
    const keys = (await moved.admin('GET', `/admin/v1/accounts/${spent.accountId}/keys`))[
      'data'
    ] as { id: string; budget: unknown }[];
    expect(keys.find((view) => view.id === spent.keyId)?.budget).toEqual({
      limit: 3,
      window: 'daily',
      spent: 3,
      held: 0,
      remaining: 0,
      resets_at: '2026-11-24T00:00:00.000Z',
    });
    expect(
      (await moved.admin('GET', `/admin/v1/accounts/${spent.accountId}`))['budget'],
    ).toMatchObject({
      window: 'monthly',
      spent: 4,
      resets_at: '2026-12-01T00:00:00.000Z',
    });
    // Sunday's window stays over: its spend is not brought back by the change.
    const olderKeys = (await moved.admin('GET', `/admin/v1/accounts/${older.accountId}/keys`))[
      'data'
    ] as { budget: unknown }[];
    expect(olderKeys[0]?.budget).toMatchObject({ spent: 0, remaining: 5 });
    // The old zone no longer starts.
    await expect(startGateway(dialect, { services, config: shanghai, clock })).rejects.toThrow(
      /budget_time_zone is Asia\/Shanghai in this configuration, but .* in UTC/,
    );
    // The new window opens at the new zone's midnight.
    clock.advance(14 * 3_600_000);
    expect((await embed(moved, spent.key)).statusCode).toBe(200);
  });

  it('refuses an unknown zone naming budget_time_zone, and changes nothing', async () => {
    const services = shared();
    const clock = manualClock();
    const first = await start(services, shanghai, clock);
    await expect(
      changeBudgetTimeZone(
        first.services.store.db,
        { zone: 'Mars/Olympus', current: 'Asia/Shanghai' },
        clock,
      ),
    ).rejects.toMatchObject({ code: 'INVALID_INPUT', param: 'budget_time_zone' });
    expect(await storedBudgetTimeZone(first.services.store.db)).toBe('Asia/Shanghai');
  });

  function schemaOf(services: { postgresSchema?: string }): { postgresSchema?: string } {
    return services.postgresSchema === undefined ? {} : { postgresSchema: services.postgresSchema };
  }
});

/**
 * What an operator sees, on real processes: the built gateway refuses in one line, and the CLI
 * shows and changes the deployment's zone, and refuses as the gateway does.
 */
describe('budget_time_zone at the command line (SQLite data directory)', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });
  const main = new URL('../../dist/main.js', import.meta.url).pathname;

  function serve(env: Record<string, string>): Promise<{ code: number | null; errors: string[] }> {
    if (!existsSync(main)) throw new Error('build first: npm test builds dist/');
    const clean = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !/^(TOLLGATE_|LOG_)/.test(name)),
    );
    const child = spawn(process.execPath, [main], {
      env: { ...clean, LOG_FORMAT: 'json', PORT: '0', ...env },
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
    const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    return new Promise((resolve) =>
      child.once('close', (code) => {
        clearTimeout(killer);
        resolve({ code, errors: stderr.replace(/\n$/, '').split('\n') });
      }),
    );
  }

  it('the gateway refuses in one line; tollgate budgets time-zone shows and changes the zone', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'tollgate-zone-'));
    const utcConfig = path.join(dir, 'utc.json');
    writeFileSync(utcConfig, JSON.stringify(utc));
    const asShanghai = { TOLLGATE_DATA_DIR: dir };
    const asUtc = { TOLLGATE_DATA_DIR: dir, TOLLGATE_CONFIG: utcConfig };
    // The deployment's first command records the zone it runs with (the default).
    expect((await cliWithEnv(asShanghai, 'accounts', 'list')).code).toBe(0);

    const refused = await serve(asUtc);
    expect(refused.code).toBe(1);
    expect(refused.errors).toEqual([
      'tollgate: budget_time_zone is UTC in this configuration, but this deployment counts ' +
        'budget windows in Asia/Shanghai (stored in its database): set budget_time_zone: ' +
        'Asia/Shanghai, or stop every instance and run tollgate budgets time-zone UTC ' +
        '(docs/billing.md, "One time zone for the deployment")',
    ]);
    const cliRefused = await cliWithEnv(asUtc, 'accounts', 'list');
    expect(cliRefused.code).toBe(1);
    expect(JSON.parse(cliRefused.stderr)).toMatchObject({
      error: { code: 'COMMAND_FAILED', message: expect.stringMatching(/^budget_time_zone is UTC/) },
    });

    const shown = await cliWithEnv(asUtc, 'budgets', 'time-zone');
    expect(JSON.parse(shown.stdout)).toEqual({
      budget_time_zone: 'Asia/Shanghai',
      configured: 'UTC',
    });
    const changed = await cliWithEnv(asUtc, 'budgets', 'time-zone', 'UTC');
    expect(changed.code).toBe(0);
    expect(JSON.parse(changed.stdout)).toEqual({
      budget_time_zone: 'UTC',
      previous: 'Asia/Shanghai',
      carried: { accounts: 0, keys: 0 },
      configured: 'UTC',
    });
    expect((await cliWithEnv(asUtc, 'accounts', 'list')).code).toBe(0);
    expect((await cliWithEnv(asShanghai, 'accounts', 'list')).code).toBe(1);
    const badZone = await cliWithEnv(asUtc, 'budgets', 'time-zone', 'Mars/Olympus');
    expect(badZone.code).toBe(1);
    expect(JSON.parse(badZone.stderr)).toMatchObject({
      error: { code: 'INVALID_INPUT', param: 'budget_time_zone' },
    });
  });
});
