import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteDatabase } from '../../src/store/sqlite-binding.js';
import { describeOnPostgres, type TestDialect } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';

const pgUrl = process.env['TOLLGATE_TEST_PG_URL'] ?? '';

type Answer = Awaited<ReturnType<TestGateway['call']>>;

function errorOf(answer: Answer): { code: string; message: string; request_id: string } {
  return answer.json<{ error: { code: string; message: string; request_id: string } }>().error;
}

/** What every answer to a database that could not be used carries. */
function expectUnavailable(answer: Answer): string {
  expect(answer.statusCode).toBe(503);
  expect(answer.headers['retry-after']).toBe('2');
  const error = errorOf(answer);
  expect(error.code).toBe('SERVICE_UNAVAILABLE');
  expect(error.request_id).toBe(answer.headers['x-service-request-id']);
  return error.message;
}

/**
 * The risk: a request whose transaction met a lost database connection answered 500
 * `INTERNAL_ERROR`, "internal error", although nothing of it was committed and the same request
 * with the same key would simply work, or although its COMMIT's outcome is unknown and the
 * caller must read the record first. Real `pg_terminate_backend` at the moment that matters:
 * a transaction waiting on a row lock (certainly rolled back), and a COMMIT held open by a
 * deferred trigger (outcome unknown).
 */
describeOnPostgres('a PostgreSQL connection killed in the middle of a request', (dialect) => {
  let gateway: TestGateway;
  let admin: pg.Client;
  let schema: string;

  beforeAll(async () => {
    gateway = await startGateway(dialect, { config: testConfig() });
    schema = (
      await sql<{ schema: string }>`select current_schema() as schema`.execute(
        gateway.services.store.db,
      )
    ).rows[0]!.schema;
    admin = new pg.Client({ connectionString: pgUrl });
    await admin.connect();
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await admin.end();
    await gateway.close();
  });

  /** Kills every backend `victims` names until `pending` settles; answers how many it killed. */
  async function killUntilAnswered<T>(
    pending: Promise<T>,
    victims: () => Promise<number[]>,
  ): Promise<{ answer: T; killed: number }> {
    let answered = false;
    void pending.finally(() => (answered = true));
    let killed = 0;
    while (!answered) {
      for (const pid of await victims()) {
        await admin.query('select pg_terminate_backend($1)', [pid]);
        killed += 1;
      }
      await delay(20);
    }
    return { answer: await pending, killed };
  }

  /** A transaction of the test's own holding `accountId`'s row: every write to it waits. */
  async function lockAccount(accountId: string) {
    const locker = new pg.Client({ connectionString: pgUrl });
    await locker.connect();
    await locker.query('begin');
    await locker.query(`select 1 from ${schema}.accounts where id = $1 for update`, [accountId]);
    const pid = (await locker.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!
      .pid;
    return {
      /** The gateway's backends waiting for this lock. */
      waiting: async () =>
        (
          await admin.query<{ pid: number }>(
            'select pid from pg_stat_activity where $1 = any(pg_blocking_pids(pid))',
            [pid],
          )
        ).rows.map((row) => row.pid),
      release: async () => {
        await locker.query('rollback');
        await locker.end();
      },
    };
  }

  const embed = (key: string, idempotencyKey: string) =>
    gateway.call('POST', '/v1/embeddings', {
      key,
      idempotencyKey,
      body: { model: 'sim-embed', input: 'killed while waiting' },
    });

  it('a claim rolled back by a killed connection: 503, Retry-After, send the same request with the same key; it then runs once', async () => {
    const { accountId, key } = await gateway.account(10_000_000);
    const idempotencyKey = randomUUID();
    const lock = await lockAccount(accountId);
    const { answer, killed } = await killUntilAnswered(embed(key, idempotencyKey), lock.waiting);
    await lock.release();
    expect(killed).toBeGreaterThan(0);
    expect(expectUnavailable(answer)).toContain(
      'nothing of this request was committed: send the same request again, with the same Idempotency-Key',
    );
    expect(await gateway.balance(accountId)).toEqual({
      balance: 10_000_000,
      held: 0,
      available: 10_000_000,
    });
    const again = await embed(key, idempotencyKey);
    expect(again.statusCode).toBe(200);
    const bill = (
      await gateway.call('GET', `/v1/requests/${String(again.headers['x-service-request-id'])}`, {
        key,
      })
    ).json<{ bill: { amount: number } }>().bill.amount;
    expect((await gateway.balance(accountId)).balance).toBe(10_000_000 - bill);
  });

  it('a settle rolled back by a killed connection: 503 and the same settle again settles it once', async () => {
    const small = await gateway.account(0);
    const body = {
      model: 'sim-chat',
      stream: true,
      max_tokens: 10,
      messages: [{ role: 'user', content: 'hi [sim:extra_prompt_tokens=75]' }],
    };
    const probe = await gateway.call('POST', '/v1/chat/completions', { key: small.key, body });
    const needed = Number(/needs (\d+) micro-yuan/.exec(errorOf(probe).message)?.[1]);
    await gateway.admin('POST', `/admin/v1/accounts/${small.accountId}/topups`, {
      amount: needed,
      reference: randomUUID(),
    });
    const chat = await gateway.call('POST', '/v1/chat/completions', { key: small.key, body });
    const requestId = String(chat.headers['x-service-request-id']);
    const record = (
      await gateway.call('GET', `/v1/requests/${requestId}`, { key: small.key })
    ).json<{ status: string; bill: { amount: number } }>();
    expect(record.status).toBe('awaiting_funds');
    await gateway.admin('POST', `/admin/v1/accounts/${small.accountId}/topups`, {
      amount: record.bill.amount,
      reference: randomUUID(),
    });

    const settleKey = randomUUID();
    const settle = () =>
      gateway.call('POST', `/v1/requests/${requestId}/settle`, {
        key: small.key,
        idempotencyKey: settleKey,
      });
    const lock = await lockAccount(small.accountId);
    const { answer } = await killUntilAnswered(settle(), lock.waiting);
    await lock.release();
    expect(expectUnavailable(answer)).toContain('with the same Idempotency-Key');
    expect(
      (await gateway.call('GET', `/v1/requests/${requestId}`, { key: small.key })).json(),
    ).toMatchObject({ status: 'awaiting_funds' });
    const settled = await settle();
    expect(settled.statusCode).toBe(200);
    expect(settled.json()).toMatchObject({ status: 'succeeded' });
    expect((await gateway.balance(small.accountId)).held).toBe(0);
  });

  it('a COMMIT whose connection was killed: 503 saying the outcome is unknown, pointing to the record by its key', async () => {
    const { accountId, key } = await gateway.account(10_000_000);
    const name = `tollgate_slow_commit_${randomBytes(4).toString('hex')}`;
    // A new record's COMMIT waits here, its session named so that only it is killed. The
    // one-statement claim (no COMMIT of its own) is refused instead, so that the claim runs in
    // a transaction of its own, as it does alone (requests/batched-admission.ts).
    await admin.query(`
      create function ${schema}.slow_commit() returns trigger language plpgsql as $$
      begin
        if coalesce(current_query(), '') !~* '^\\s*commit' then
          raise exception 'this test commits only by COMMIT';
        end if;
        perform set_config('application_name', '${name}', false);
        perform pg_sleep(30);
        return null;
      end $$;
      create constraint trigger slow_commit after insert on ${schema}.requests
        deferrable initially deferred for each row execute function ${schema}.slow_commit();`);
    const idempotencyKey = randomUUID();
    let answer: Answer;
    try {
      ({ answer } = await killUntilAnswered(embed(key, idempotencyKey), async () =>
        (
          await admin.query<{ pid: number }>(
            `select pid from pg_stat_activity where application_name = $1 and wait_event = 'PgSleep'`,
            [name],
          )
        ).rows.map((row) => row.pid),
      ));
    } finally {
      await admin.query(`drop trigger slow_commit on ${schema}.requests`);
      await admin.query(`drop function ${schema}.slow_commit()`);
    }
    const message = expectUnavailable(answer);
    expect(message).toContain('while committing this request: whether it was recorded is unknown');
    expect(message).toContain(`GET /v1/requests?idempotency_key=${idempotencyKey}`);
    expect(message).toContain(String(answer.headers['x-service-request-id']));
    // Killed before its commit was written: no record, and the same request runs once.
    const lookup = await gateway.call('GET', `/v1/requests?idempotency_key=${idempotencyKey}`, {
      key,
    });
    expect(lookup.statusCode).toBe(404);
    expect((await embed(key, idempotencyKey)).statusCode).toBe(200);
    expect((await gateway.balance(accountId)).held).toBe(0);
  });
});

/**
 * The same answers on SQLite, whose analogue of a lost connection is a database it cannot write:
 * another connection holds the write lock past `busy_timeout` (5 s), a real `SQLITE_BUSY`.
 * SQLite's transactions are local and atomic: one that failed committed nothing.
 */
describe('a SQLite database locked past busy_timeout in the middle of a request', () => {
  let gateway: TestGateway;
  let dir: string;
  let file: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'tollgate-busy-'));
    file = path.join(dir, 'tollgate.db');
    const onFile: TestDialect = { name: 'sqlite', fresh: () => ({ databaseUrl: file }) };
    gateway = await startGateway(onFile, { config: testConfig() });
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * Another connection's write transaction on the file: every write of the gateway waits. Taken
   * without waiting in SQLite: the gateway runs in this process, and a blocking wait for its write
   * lock would stop the event loop that commits what holds it (a deadlock until the locker's
   * busy timeout, seen on a loaded machine when the lock was asked for between a write of the
   * gateway and its group commit). Each attempt fails at once; the next waits a few milliseconds.
   */
  async function lockDatabase() {
    const locker = new SqliteDatabase(file, { timeout: 0 });
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        locker.exec('begin immediate');
        break;
      } catch (error) {
        if ((error as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() > deadline)
          throw error;
        await delay(5);
      }
    }
    return () => {
      locker.exec('rollback');
      locker.close();
    };
  }

  const embed = (key: string, idempotencyKey: string, input: string) =>
    gateway.call('POST', '/v1/embeddings', {
      key,
      idempotencyKey,
      body: { model: 'sim-embed', input },
    });

  it('a claim that met SQLITE_BUSY: 503, Retry-After, the same request with the same key then runs once', async () => {
    const { accountId, key } = await gateway.account(10_000_000);
    const idempotencyKey = randomUUID();
    const unlock = await lockDatabase();
    let answer: Answer;
    try {
      answer = await embed(key, idempotencyKey, 'locked out');
    } finally {
      unlock();
    }
    expect(expectUnavailable(answer)).toContain(
      'nothing of this request was committed: send the same request again, with the same Idempotency-Key',
    );
    expect((await embed(key, idempotencyKey, 'locked out')).statusCode).toBe(200);
    expect((await gateway.balance(accountId)).held).toBe(0);
  }, 20_000);

  it('an outcome that could not be recorded: 503 pointing to the record, which keeps its hold', async () => {
    const { accountId, key } = await gateway.account(10_000_000);
    const pending = embed(key, randomUUID(), 'slow upstream [sim:delay=600]');
    // The claim is in; the upstream is still working when the database locks.
    await delay(250);
    const unlock = await lockDatabase();
    let answer: Answer;
    try {
      answer = await pending;
    } finally {
      unlock();
    }
    const requestId = String(answer.headers['x-service-request-id']);
    const message = expectUnavailable(answer);
    expect(message).toContain('to record the outcome of this request: it was not recorded');
    expect(message).toContain(`GET /v1/requests/${requestId}`);
    const record = (await gateway.call('GET', `/v1/requests/${requestId}`, { key })).json();
    expect(record).toMatchObject({ status: 'processing', reserve: { state: 'open' } });
    expect((await gateway.balance(accountId)).held).toBeGreaterThan(0);
  }, 20_000);
});
