import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { defaultConfig } from '../../src/config/default-config.js';
import { createServices } from '../../src/services.js';
import { openStore } from '../../src/store/database.js';
import { migrationProvider } from '../../src/store/migrations/index.js';
import { finishedRequest, unknownOutcome } from '../helpers/records.js';
import { cliIn } from '../helpers/processes.js';

const dataDir = mkdtempSync(path.join(tmpdir(), 'tollgate-cli-'));
const env = { TOLLGATE_DATA_DIR: dataDir };

const cli = (...args: string[]) => cliIn(dataDir, ...args);

/**
 * A new account topped up with 1,000 and one key, and a request of that key that held 400 and
 * ended with `outcome` (written through the services on the CLI's database).
 */
async function requestOfNewAccount(
  name: string,
  options: Omit<Parameters<typeof finishedRequest>[1], 'key' | 'hold'>,
): Promise<string> {
  const services = await createServices({
    config: parseConfig(defaultConfig, 'test'),
    databaseUrl: `sqlite:${path.join(dataDir, 'tollgate.sqlite')}`,
    assetsDir: path.join(dataDir, 'assets'),
    upstreams: false,
  });
  try {
    const account = await services.accounts.create({ email: `${name}@example.test` });
    await services.accounts.topUp(account.id, { amount: 1_000, reference: name });
    const key = await services.keys.create(account.id, {});
    return await finishedRequest(services, { key: key.key, hold: 400, ...options });
  } finally {
    await services.close();
  }
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
    expect(prices.json).toMatchObject({ object: 'model_prices', price_version: 'sim-embed@2' });
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

  it('rotates a key once, with an overlap, and refuses a second rotation', async () => {
    const account = await cli('accounts', 'create', '--email', 'rotate@example.test');
    const accountId = String(account.json['id']);
    const old = await cli('keys', 'create', accountId, '--name', 'to-rotate');
    const oldId = String(old.json['id']);
    const rotated = await cli('keys', 'rotate', oldId, '--expire-old-in', '120');
    expect(rotated.code).toBe(0);
    expect(rotated.json).toMatchObject({
      name: 'to-rotate',
      key: expect.stringMatching(/^tgk_/),
      replaces: { id: oldId, replaced_by: rotated.json['id'], disabled_at: null },
    });
    const again = await cli('keys', 'rotate', oldId);
    expect(again.code).toBe(1);
    expect(again.json).toMatchObject({ error: { code: 'KEY_NOT_ROTATABLE' } });
    const bad = await cli('keys', 'rotate', String(rotated.json['id']), '--expire-old-in', 'soon');
    expect(bad.code).toBe(1);
    expect(bad.json).toMatchObject({
      error: { code: 'INVALID_INPUT', message: expect.stringContaining('expire_old_in_seconds') },
    });
  });

  it('answers a wrong command with a JSON error and exit 1', async () => {
    const wrong = await cli('topup', 'acct_missing', '--amount=-5', '--reference', 'r');
    expect(wrong.code).toBe(1);
    expect(wrong.json).toMatchObject({ error: { code: 'INVALID_INPUT' } });
  });

  it('migrate brings a new database to the newest schema and exits, and again changes nothing', async () => {
    const fresh = mkdtempSync(path.join(tmpdir(), 'tollgate-migrate-'));
    try {
      const newest = Object.keys(await migrationProvider.getMigrations()).sort();
      const first = await cliIn(fresh, 'migrate');
      expect(first).toEqual({
        code: 0,
        json: { schema: newest.at(-1), migrations: newest.length },
      });
      // What was applied is recorded in the database a gateway then opens.
      const store = await openStore({ url: `sqlite:${path.join(fresh, 'tollgate.sqlite')}` });
      try {
        const applied = await store.db
          .selectFrom('kysely_migration' as never)
          .select('name' as never)
          .execute();
        expect(applied.map((row) => (row as { name: string }).name).sort()).toEqual(newest);
      } finally {
        await store.close();
      }
      expect(await cliIn(fresh, 'migrate')).toEqual(first);
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
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

  it('lets an operator resolve an unknown outcome from the CLI, with a reason, once', async () => {
    const requestId = await requestOfNewAccount('operator-case', { outcome: unknownOutcome });
    const withoutReason = await cli('requests', 'resolve', requestId, '--release');
    expect(withoutReason).toMatchObject({ code: 1, json: { error: { code: 'INVALID_INPUT' } } });
    const resolved = await cli(
      'requests',
      'resolve',
      requestId,
      '--capture',
      '250',
      '--reason',
      'provider invoice 7',
    );
    expect(resolved).toMatchObject({
      code: 0,
      json: {
        status: 'resolved',
        bill: { amount: 250, captured: true },
        resolution: { action: 'capture', amount: 250, reason: 'provider invoice 7' },
      },
    });
    const again = await cli('requests', 'resolve', requestId, '--release', '--reason', 'twice');
    expect(again).toMatchObject({ code: 1, json: { error: { code: 'SETTLEMENT_NOT_ALLOWED' } } });
    const shown = await cli(
      'accounts',
      'show',
      String((await cli('requests', 'show', requestId)).json['account_id']),
    );
    expect(shown.json).toMatchObject({ balance: 750, held: 0 });
  });

  it('lists usage beyond the cap and records an operator review once, moving no money', async () => {
    const requestId = await requestOfNewAccount('flagged-case', {
      model: 'sim-chat',
      path: '/v1/chat/completions',
      outcome: {
        kind: 'succeeded',
        body: {},
        usage: { completion_tokens: 100_000 },
        amount: 300,
        pricingRule: 'capped',
        upstreamRequestId: null,
        usageFlag:
          'usage_exceeded_cap: completion_tokens: upstream reported 100000, billed the bound 5',
      },
    });
    const flagged = await cli('requests', 'flagged');
    expect((flagged.json['data'] as { id: string }[]).map((row) => row.id)).toContain(requestId);
    const withoutReason = await cli('requests', 'review-usage', requestId);
    expect(withoutReason).toMatchObject({ code: 1, json: { error: { code: 'INVALID_INPUT' } } });
    const reviewed = await cli('requests', 'review-usage', requestId, '--reason', 'known bug');
    expect(reviewed).toMatchObject({
      code: 0,
      json: { usage_exceeded_cap: { review: 'known bug' }, bill: { amount: 300 } },
    });
    const again = await cli('requests', 'review-usage', requestId, '--reason', 'twice');
    expect(again).toMatchObject({ code: 1, json: { error: { code: 'USAGE_REVIEW_NOT_ALLOWED' } } });
    const unreviewed = await cli('requests', 'flagged');
    expect((unreviewed.json['data'] as { id: string }[]).map((row) => row.id)).not.toContain(
      requestId,
    );
    const all = await cli('requests', 'flagged', '--all');
    expect((all.json['data'] as { id: string }[]).map((row) => row.id)).toContain(requestId);
  });
});
