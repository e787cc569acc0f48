import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import { openStore } from '../../src/store/database.js';

const dataDir = mkdtempSync(path.join(tmpdir(), 'tollgate-cli-'));
const env = { TOLLGATE_DATA_DIR: dataDir };

async function cli(...args: string[]): Promise<{ code: number; json: Record<string, unknown> }> {
  let out = '';
  let err = '';
  const code = await runCli(
    args,
    env,
    { write: (text) => void (out += text) },
    { write: (text) => void (err += text) },
  );
  return { code, json: JSON.parse(out === '' ? err : out) as Record<string, unknown> };
}

describe('tollgate CLI', () => {
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('creates an account, tops it up once per reference, issues a key, and checks the ledger', async () => {
    const account = await cli('accounts', 'create', '--email', 'cli@example.test');
    expect(account.code).toBe(0);
    const accountId = String(account.json['id']);
    expect(
      (await cli('topup', accountId, '--amount', '5000000', '--reference', 'wire-1')).json,
    ).toMatchObject({ balance: 5_000_000 });
    expect(
      (await cli('topup', accountId, '--amount', '5000000', '--reference', 'wire-1')).json,
    ).toMatchObject({ balance: 5_000_000, replayed: true });
    const key = await cli(
      'keys',
      'create',
      accountId,
      '--kind',
      'service',
      '--models',
      'sim-embed,sim-rerank',
    );
    expect(key.json).toMatchObject({
      kind: 'service',
      models: ['sim-embed', 'sim-rerank'],
      key: expect.stringMatching(/^tgk_/),
    });
    const prices = await cli(
      'prices',
      'set',
      'sim-embed',
      '--json',
      '{"input_per_million_tokens": 700000}',
    );
    expect(prices.json).toMatchObject({ priceVersion: 'sim-embed@2' });
    const check = await cli('ledger', 'check');
    expect(check).toMatchObject({ code: 0, json: { ok: true, accounts: 1 } });
  });

  it('exits non-zero with the violation when the ledger is broken', async () => {
    const store = await openStore({ url: `sqlite:${path.join(dataDir, 'tollgate.sqlite')}` });
    await store.db.updateTable('accounts').set({ balance: 1 }).execute();
    await store.close();
    const check = await cli('ledger', 'check');
    expect(check.code).toBe(1);
    expect(check.json['ok']).toBe(false);
  });

  it('answers a wrong command with a JSON error and exit 1', async () => {
    const wrong = await cli('topup', 'acct_missing', '--amount=-5', '--reference', 'r');
    expect(wrong.code).toBe(1);
    expect(wrong.json).toMatchObject({ error: { code: 'INVALID_INPUT' } });
  });

  it('runs as the installed `tollgate` binary and exits when done', () => {
    const bin = new URL('../../bin/tollgate.mjs', import.meta.url).pathname;
    if (!existsSync(new URL('../../dist/cli/main.js', import.meta.url)))
      throw new Error('build first: npm test builds dist/');
    const output = execFileSync(
      process.execPath,
      [bin, 'accounts', 'create', '--email', 'binary@example.test'],
      { env: { ...process.env, ...env }, timeout: 20_000 },
    );
    expect(JSON.parse(output.toString())).toMatchObject({ email: 'binary@example.test' });
  });
});
