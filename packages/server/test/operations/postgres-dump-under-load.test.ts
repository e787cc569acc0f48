import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, expect, it } from 'vitest';
import { describeOnPostgres } from '../helpers/dialects.js';
import { databaseUrlOf, queryPostgres, runOnPostgres } from '../helpers/postgres-statement.js';
import {
  requireBuild,
  startGatewayProcess,
  tollgate,
  underLoad,
  writeConfig,
  type GatewayProcess,
} from './gateway-process.js';

const run = promisify(execFile);
const pgUrl = process.env['TOLLGATE_TEST_PG_URL'] ?? '';
const TOP_UP = 1_000_000;

/** The server's URL with another database name. */
function databaseUrl(name: string): string {
  return databaseUrlOf(pgUrl, name);
}

function onServer(statement: string): Promise<void> {
  return runOnPostgres(pgUrl, statement);
}

/** Each account's balance and held, with its journal's sums and its captured holds. */
async function moneyIn(url: string) {
  const rows = await queryPostgres<Record<string, string>>(
    url,
    `select a.id, a.balance::text, a.held::text,
            (select coalesce(sum(balance_delta), 0) from journal j where j.account_id = a.id)::text as journal_balance,
            (select coalesce(sum(held_delta), 0) from journal j where j.account_id = a.id)::text as journal_held,
            (select count(*) from holds h where h.account_id = a.id and h.state = 'captured')::text as captures
     from accounts a`,
  );
  return rows.map((row) => ({
    balance: Number(row['balance']),
    held: Number(row['held']),
    journalBalance: Number(row['journal_balance']),
    journalHeld: Number(row['journal_held']),
    captures: Number(row['captures']),
  }));
}

/**
 * docs/operations.md, "Backup and restore" (PostgreSQL): `pg_dump` of the gateway's database
 * while a real gateway process serves paid requests, `pg_restore` into a fresh database. pg_dump
 * reads in one repeatable-read snapshot, so the restored ledger is clean and its balances are
 * what its journal says. Each request costs exactly 1 micro-yuan.
 */
describeOnPostgres('PostgreSQL: pg_dump while the gateway serves', () => {
  const databases: string[] = [];
  const gateways: GatewayProcess[] = [];
  let dir: string | undefined;
  afterEach(async () => {
    for (const gateway of gateways.splice(0)) await gateway.stop();
    for (const name of databases.splice(0))
      await onServer(`drop database if exists ${name} with (force)`);
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('a pg_dump taken under load restores into a fresh database with a clean ledger whose balances match the journal', async () => {
    requireBuild();
    dir = mkdtempSync(path.join(tmpdir(), 'tollgate-pg-dump-'));
    const suffix = randomBytes(6).toString('hex');
    const [liveName, restoredName] = [`tollgate_live_${suffix}`, `tollgate_restored_${suffix}`];
    databases.push(liveName, restoredName);
    await onServer(`create database ${liveName}`);
    const config = writeConfig(dir);
    const live = {
      TOLLGATE_DATA_DIR: path.join(dir, 'live'),
      TOLLGATE_CONFIG: config,
      TOLLGATE_DATABASE_URL: databaseUrl(liveName),
    };
    const gateway = await startGatewayProcess(live);
    gateways.push(gateway);
    const { accountId, key } = await gateway.account(TOP_UP);

    const dump = path.join(dir, 'tollgate.dump');
    const { statuses } = await underLoad(gateway, key, () =>
      run('pg_dump', ['--format=custom', '--no-owner', `--file=${dump}`, databaseUrl(liveName)]),
    );
    expect(statuses.every((status) => status === 200)).toBe(true);
    await gateway.stop();
    expect((await moneyIn(databaseUrl(liveName)))[0]?.balance).toBe(TOP_UP - statuses.length);

    await onServer(`create database ${restoredName}`);
    await run('pg_restore', ['--no-owner', `--dbname=${databaseUrl(restoredName)}`, dump]);
    const [account] = await moneyIn(databaseUrl(restoredName));
    if (account === undefined) throw new Error('the dump has no account');
    expect(account.balance).toBe(account.journalBalance);
    expect(account.held).toBe(account.journalHeld);
    expect(account.captures).toBeGreaterThanOrEqual(60);
    expect(account.captures).toBeLessThan(statuses.length);
    expect(account.balance).toBe(TOP_UP - account.captures);

    const restored = { ...live, TOLLGATE_DATABASE_URL: databaseUrl(restoredName) };
    const check = await tollgate(restored, 'ledger', 'check');
    expect(check.code, check.stdout).toBe(0);
    expect(JSON.parse(check.stdout)).toMatchObject({ ok: true, violations: [] });
    // The restored database opens as it is (nothing left to migrate) and serves the balance.
    const again = await startGatewayProcess(restored);
    gateways.push(again);
    expect(await again.admin('GET', `/accounts/${accountId}`)).toMatchObject({
      balance: account.balance,
      held: account.held,
    });
  }, 180_000);

  it('tollgate backup refuses on PostgreSQL and points to pg_dump', async () => {
    requireBuild();
    const refused = await tollgate(
      { TOLLGATE_DATABASE_URL: databaseUrl('tollgate_never_opened') },
      'backup',
      '--to',
      path.join(tmpdir(), 'never-written.sqlite'),
    );
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stderr)).toMatchObject({
      error: { code: 'INVALID_INPUT', message: expect.stringContaining('pg_dump') as unknown },
    });
  });
});
