import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AccountStatement } from '@tollgate/protocol';
import { afterEach, expect, it } from 'vitest';
import { describeEachDialect, type TestDialect } from '../helpers/dialects.js';
import { shortTimeoutsConfig, startGateway, type TestGateway } from '../helpers/gateway.js';
import { finishedTask, settleBodyOf, type TaskBody } from '../helpers/tasks.js';
import { DAY_MS, expectStatementReconciles, parseCsv, statementText, usageOf } from './spend.js';
import { cliWithEnv } from '../helpers/processes.js';

/** The CLI on the gateway's own database: its exit code, stdout and stderr. */
async function cli(env: NodeJS.ProcessEnv, ...args: string[]) {
  const { code, stdout, stderr } = await cliWithEnv(env, ...args);
  return { code, out: stdout, err: stderr };
}

/**
 * After a mixed workload — a top-up and a redeemed code, embeddings, chat from a personal and a
 * service key, an image task settled, a failed request, a 402, two unconfirmed requests (one
 * resolved by an operator with a capture, one left holding) — an operator's statement reconciles
 * to the ledger: opening + movements = closing = the account's balance; the usage totals are the
 * captures; the CSV carries the same numbers; `tollgate statement` prints what the admin API
 * answers, byte for byte.
 */
describeEachDialect('a statement reconciles to the ledger on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  let dataDir: string | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
    if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
  });

  /** A gateway whose database the CLI can open too, and the CLI's environment for it. */
  async function sharedDatabase(): Promise<{ client: TestGateway; env: NodeJS.ProcessEnv }> {
    dataDir = mkdtempSync(path.join(tmpdir(), 'tollgate-statement-'));
    const database =
      dialect.name === 'sqlite'
        ? { databaseUrl: path.join(dataDir, 'tollgate.sqlite') }
        : dialect.fresh();
    const shared: TestDialect = { name: dialect.name, fresh: () => database };
    const client = await startGateway(shared, { config: shortTimeoutsConfig() });
    const url =
      database.postgresSchema === undefined
        ? `sqlite:${database.databaseUrl}`
        : `${database.databaseUrl}?options=${encodeURIComponent(`-c search_path=${database.postgresSchema}`)}`;
    return { client, env: { TOLLGATE_DATA_DIR: dataDir, TOLLGATE_DATABASE_URL: url } };
  }

  it('after a mixed workload: opening + movements = closing = balance, usage = captures, CSV and CLI agree', async () => {
    const { client, env } = await sharedDatabase();
    gateway = client;
    const { accountId, key } = await client.account(300_000);
    const service = await client.newKey(accountId, { kind: 'service' });
    const code = await client.admin('POST', '/admin/v1/redemption-codes', { amount: 100_000 });
    const redeemed = await client.call('POST', '/v1/redemptions', {
      key,
      body: { code: code['code'] },
    });
    expect(redeemed.statusCode, redeemed.body).toBe(200);

    const embedded = await client.call('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input: 'what was spent' },
    });
    expect(embedded.statusCode, embedded.body).toBe(200);
    for (const caller of [key, service.key]) {
      const chat = await client.call('POST', '/v1/chat/completions', {
        key: caller,
        body: { model: 'sim-chat', messages: [{ role: 'user', content: 'hello' }], max_tokens: 40 },
      });
      expect(chat.statusCode, chat.body).toBe(200);
    }
    const created = await client.call('POST', '/v1/images/generations', {
      key,
      body: { model: 'sim-image', prompt: 'a ledger', size: '256x256' },
    });
    expect(created.statusCode, created.body).toBe(202);
    const imagePath = `/v1/images/${created.json<TaskBody>().id}`;
    const image = await finishedTask(client, key, imagePath);
    const settled = await client.call('POST', `${imagePath}/settle`, {
      key,
      body: settleBodyOf(image),
    });
    expect(settled.statusCode, settled.body).toBe(200);
    const failed = await client.call('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input: 'no [sim:fail=500]' },
    });
    expect(failed.statusCode).toBe(502);
    const tooDear = await client.call('POST', '/v1/videos', {
      key,
      body: { model: 'sim-video', prompt: 'long', seconds: 8, size: '1280x720' },
    });
    expect(tooDear.statusCode).toBe(402);
    const unknown: string[] = [];
    for (const input of ['one [sim:hang]', 'two [sim:hang]']) {
      const hung = await client.call('POST', '/v1/embeddings', {
        key,
        body: { model: 'sim-embed', input },
      });
      expect(hung.statusCode).toBe(504);
      unknown.push(String(hung.headers['x-service-request-id']));
    }
    const [resolvedId, openId] = unknown;
    await client.admin('POST', `/admin/v1/requests/${resolvedId}/resolve`, {
      action: 'capture',
      amount: 3,
      reason: 'the upstream confirmed it',
    });

    const now = Date.now();
    const range = `from=${day(now - DAY_MS)}&to=${day(now + DAY_MS)}`;
    const json = await statementText(client, accountId, range);
    const statement = JSON.parse(json.body) as AccountStatement;
    expect(json.contentType).toBe('application/json; charset=utf-8');
    expectStatementReconciles(statement);
    const account = await client.balance(accountId);
    expect(statement.opening_balance).toBe(0);
    expect(statement.closing_balance).toBe(account.balance);
    // The open hold of the unconfirmed request reserves money but has not moved the balance.
    expect(account.held).toBeGreaterThan(0);
    expect(statement.movements.map((movement) => movement.kind).sort()).toEqual([
      'capture',
      'capture',
      'capture',
      'capture',
      'capture',
      'redemption',
      'topup',
    ]);
    const requestIds = statement.movements.map((movement) => movement.request_id);
    for (const untouched of [failed, tooDear].map((response) =>
      String(response.headers['x-service-request-id']),
    ))
      expect(requestIds).not.toContain(untouched);
    expect(requestIds).not.toContain(openId);
    expect(
      statement.movements.find((movement) => movement.request_id === resolvedId),
    ).toMatchObject({
      kind: 'capture',
      amount: -3,
      description: 'operator: the upstream confirmed it',
    });
    expect(statement.movements.find((movement) => movement.task_id !== null)).toMatchObject({
      kind: 'capture',
      amount: -(image.billing.actual_amount ?? 0),
      request_id: image.request_id,
      task_id: image.id,
      model: 'sim-image',
      price_version: image.billing.price_version,
    });
    expect(statement.movements.find((movement) => movement.kind === 'redemption')).toMatchObject({
      amount: 100_000,
      reference: expect.stringMatching(/^redemption:rdm_/),
    });
    expect(statement.totals.credits).toBe(400_000);
    expect(statement.closing_balance).toBe(400_000 - statement.totals.debits);

    // Usage: the same captures, per model, for either key of the account.
    const usage = await usageOf(client, service.key, range);
    expect(usage.totals.amount).toBe(statement.totals.debits);
    expect(usage.totals.requests).toBe(5);
    expect(usage.totals.by_model.map((model) => [model.model, model.requests])).toEqual([
      ['sim-chat', 2],
      ['sim-embed', 2],
      ['sim-image', 1],
    ]);
    expect(await usageOf(client, key, range)).toEqual(usage);

    // CSV: the same numbers.
    const csv = await statementText(client, accountId, range, { accept: 'text/csv' });
    const [, opening, ...rows] = parseCsv(csv.body);
    const closing = rows.pop();
    expect(opening?.[3]).toBe('0');
    expect(closing?.[3]).toBe(String(statement.closing_balance));
    expect(rows.map((row) => [row[10], Number(row[2]), Number(row[3])])).toEqual(
      statement.movements.map((movement) => [movement.id, movement.amount, movement.balance]),
    );

    // The CLI on the same database prints what the admin API answers.
    const [from, to] = [day(now - DAY_MS), day(now + DAY_MS)];
    const printed = await cli(env, 'statement', accountId, '--from', from, '--to', to);
    expect(printed.err).toBe('');
    expect(printed).toMatchObject({ code: 0, out: json.body });
    const printedCsv = await cli(
      env,
      'statement',
      accountId,
      '--from',
      from,
      '--to',
      to,
      '--format',
      'csv',
    );
    expect(printedCsv).toMatchObject({ code: 0, out: csv.body });
    const refused = await cli(env, 'statement', accountId, '--format', 'xml');
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.err)).toMatchObject({ error: { code: 'INVALID_INPUT' } });
    const nobody = await cli(env, 'statement', 'acct_nobody');
    expect(nobody.code).toBe(1);
    expect(JSON.parse(nobody.err)).toMatchObject({ error: { code: 'NOT_FOUND' } });
  });
});

function day(time: number): string {
  return new Date(time).toISOString().slice(0, 10);
}
