import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import { parseConfig } from '../../src/config/load.js';
import { defaultConfig } from '../../src/config/default-config.js';
import { ApiError } from '../../src/errors/api-error.js';
import { createServices } from '../../src/services.js';
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
    const services = await createServices({
      config: parseConfig(defaultConfig, 'test'),
      databaseUrl: `sqlite:${path.join(dataDir, 'tollgate.sqlite')}`,
      assetsDir: path.join(dataDir, 'assets'),
      upstreams: false,
    });
    let requestId = '';
    try {
      const account = await services.accounts.create({ email: 'operator-case@example.test' });
      await services.accounts.topUp(account.id, { amount: 1_000, reference: 'op' });
      const key = await services.keys.create(account.id, {});
      const principal = await services.keys.authenticate(key.key);
      requestId = services.ids.next('req');
      const identity = {
        requestId,
        principal,
        idempotencyKey: crypto.randomUUID(),
        fingerprint: 'f',
        method: 'POST',
        path: '/v1/embeddings',
        model: 'sim-embed',
      };
      const claim = await services.requests.claim(identity, {
        amount: 400,
        priceVersion: 'sim-embed@1',
      });
      if (claim.kind !== 'claimed') throw new Error('not claimed');
      await services.requests.finish(identity, claim.holdId, {
        kind: 'unknown',
        error: new ApiError('UPSTREAM_TIMEOUT', 'timeout'),
        upstreamRequestId: null,
      });
    } finally {
      await services.close();
    }
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
});
