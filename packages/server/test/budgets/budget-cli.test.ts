import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliIn } from '../helpers/processes.js';

const dataDir = mkdtempSync(path.join(tmpdir(), 'tollgate-budget-cli-'));
const cli = (...args: string[]) => cliIn(dataDir, ...args);

describe('tollgate keys budget / accounts budget', () => {
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('sets, shows and removes a key budget and an account budget as the admin API does', async () => {
    const accountId = String(
      (await cli('accounts', 'create', '--email', 'budget@example.test')).json['id'],
    );
    const keyId = String((await cli('keys', 'create', accountId)).json['id']);
    const keyBudget = await cli('keys', 'budget', keyId, '--limit', '5000', '--window', 'daily');
    expect(keyBudget).toMatchObject({
      code: 0,
      json: {
        id: keyId,
        budget: { limit: 5_000, window: 'daily', spent: 0, held: 0, remaining: 5_000 },
      },
    });
    const accountBudget = await cli(
      'accounts',
      'budget',
      accountId,
      '--limit',
      '9000',
      '--window',
      'total',
    );
    expect(accountBudget.json).toMatchObject({
      id: accountId,
      budget: { limit: 9_000, window: 'total', resets_at: null },
    });
    expect((await cli('accounts', 'show', accountId)).json).toMatchObject({
      budget: { limit: 9_000 },
    });
    expect((await cli('keys', 'budget', keyId, '--remove')).json).toMatchObject({ budget: null });
    expect((await cli('accounts', 'budget', accountId, '--remove')).json).toMatchObject({
      budget: null,
    });
  });

  it('refuses a bad window with a JSON error naming it and exit 1', async () => {
    const accountId = String(
      (await cli('accounts', 'create', '--email', 'bad-budget@example.test')).json['id'],
    );
    const refused = await cli('accounts', 'budget', accountId, '--limit', '10', '--window', 'hour');
    expect(refused.code).toBe(1);
    expect(refused.json).toMatchObject({ error: { code: 'INVALID_INPUT', param: 'window' } });
    expect((await cli('accounts', 'show', accountId)).json).toMatchObject({ budget: null });
  });

  it('sets a key allowlist at creation and replaces or lifts it with keys update', async () => {
    const accountId = String(
      (await cli('accounts', 'create', '--email', 'allow@example.test')).json['id'],
    );
    const created = await cli('keys', 'create', accountId, '--allowed-ips', '10.0.0.0/8,::1');
    expect(created.json).toMatchObject({ allowed_ips: ['10.0.0.0/8', '::1/128'] });
    const keyId = String(created.json['id']);
    expect(
      (await cli('keys', 'update', keyId, '--allowed-ips', '::ffff:192.0.2.0/120')).json,
    ).toMatchObject({ allowed_ips: ['192.0.2.0/24'] });
    const refused = await cli('keys', 'update', keyId, '--allowed-ips', '10.0.0.0/40');
    expect(refused).toMatchObject({ code: 1, json: { error: { param: 'allowed_ips' } } });
    expect((await cli('keys', 'update', keyId, '--allow-any')).json).toMatchObject({
      allowed_ips: null,
    });
  });
});
