import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteDatabase } from '../../src/store/sqlite-binding.js';
import {
  requireBuild,
  startGatewayProcess,
  tollgate,
  underLoad,
  writeConfig,
  type GatewayProcess,
} from './gateway-process.js';

const TOP_UP = 1_000_000;

/** What the copy's own tables say: each account's balance and held, and its journal's sums. */
function moneyIn(file: string) {
  const db = new SqliteDatabase(file, { readonly: true, fileMustExist: true });
  try {
    const rows = db
      .prepare(
        `select a.id, a.balance, a.held,
                (select coalesce(sum(balance_delta), 0) from journal j where j.account_id = a.id) as journal_balance,
                (select coalesce(sum(held_delta), 0) from journal j where j.account_id = a.id) as journal_held,
                (select count(*) from holds h where h.account_id = a.id and h.state = 'captured') as captures
         from accounts a`,
      )
      .all() as {
      id: string;
      balance: number;
      held: number;
      journal_balance: number;
      journal_held: number;
      captures: number;
    }[];
    return rows;
  } finally {
    db.close();
  }
}

/**
 * docs/operations.md, "Backup and restore" (SQLite): `tollgate backup --to FILE` from another
 * process while a real gateway process serves paid requests on the same file. The copy must be
 * a consistent snapshot (never half of a group commit): restored, its ledger check is clean,
 * every balance equals what its journal says, and a gateway started on it serves that balance.
 * Every request costs exactly 1 micro-yuan, so balances count captured requests.
 */
describe('SQLite backup while the gateway serves', () => {
  let dir: string | undefined;
  const gateways: GatewayProcess[] = [];
  afterEach(async () => {
    for (const gateway of gateways.splice(0)) await gateway.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('a backup taken under load restores to a clean ledger whose balances match the journal', async () => {
    requireBuild();
    dir = mkdtempSync(path.join(tmpdir(), 'tollgate-backup-'));
    const config = writeConfig(dir);
    const live = { TOLLGATE_DATA_DIR: path.join(dir, 'live'), TOLLGATE_CONFIG: config };
    const gateway = await startGatewayProcess(live);
    gateways.push(gateway);
    const { accountId, key } = await gateway.account(TOP_UP);

    const copy = path.join(dir, 'tollgate-backup.sqlite');
    const { statuses, result: backup } = await underLoad(gateway, key, () =>
      tollgate(live, 'backup', '--to', copy),
    );
    expect(backup.code, backup.stderr).toBe(0);
    expect(JSON.parse(backup.stdout)).toMatchObject({
      object: 'backup',
      file: copy,
      integrity: 'ok',
      schema: expect.stringMatching(/^\d{3}-/) as unknown,
    });
    expect(statuses.every((status) => status === 200)).toBe(true);
    // One self-contained file: no WAL or shared-memory file beside it, no partial left over.
    expect(existsSync(`${copy}-wal`)).toBe(false);
    await gateway.stop();
    const liveBalance = moneyIn(path.join(live.TOLLGATE_DATA_DIR, 'tollgate.sqlite'))[0]?.balance;
    expect(liveBalance).toBe(TOP_UP - statuses.length);

    // Restore: the copy becomes the database of a new data directory.
    const restored = { TOLLGATE_DATA_DIR: path.join(dir, 'restored'), TOLLGATE_CONFIG: config };
    mkdirSync(restored.TOLLGATE_DATA_DIR);
    copyFileSync(copy, path.join(restored.TOLLGATE_DATA_DIR, 'tollgate.sqlite'));
    const [account] = moneyIn(path.join(restored.TOLLGATE_DATA_DIR, 'tollgate.sqlite'));
    if (account === undefined) throw new Error('the copy has no account');
    expect(account.balance).toBe(account.journal_balance);
    expect(account.held).toBe(account.journal_held);
    // A snapshot taken mid-way: some requests in it, not all of them; each captured one cost 1.
    expect(account.captures).toBeGreaterThanOrEqual(60);
    expect(account.captures).toBeLessThan(statuses.length);
    expect(account.balance).toBe(TOP_UP - account.captures);

    const check = await tollgate(restored, 'ledger', 'check');
    expect(check.code, check.stdout).toBe(0);
    expect(JSON.parse(check.stdout)).toMatchObject({ ok: true, violations: [] });

    const again = await startGatewayProcess(restored);
    gateways.push(again);
    expect(await again.admin('GET', `/accounts/${accountId}`)).toMatchObject({
      balance: account.balance,
      held: account.held,
    });
  }, 180_000);
});
