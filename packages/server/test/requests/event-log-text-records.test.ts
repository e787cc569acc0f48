import { randomUUID } from 'node:crypto';
import { afterEach, expect, it } from 'vitest';
import { checkLedger } from '../../src/billing/ledger-check.js';
import { ApiError } from '../../src/errors/api-error.js';
import type { RecordLog } from '../../src/requests/record-log.js';
import { Wallets } from '../../src/usage/wallet.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';
import { requestIdentity, succeededOutcome, unknownOutcome } from '../helpers/records.js';

/**
 * `accounting.event_log` (decision 0019, slice 3): the text routes' claims and finishes write
 * events and move the account; the projector writes the records, holds and journal later. The
 * risks: a caller reads a record (or replays it) between the two and sees something else than
 * what it was answered; a pending event's money is counted twice or not at all; a claim slips past
 * the idempotency key of one not applied yet. The projector is stopped in each test, so every
 * check runs with the events still pending, then again once they are applied.
 */
const CHAT = { model: 'sim-chat', messages: [{ role: 'user', content: 'hello' }] };

describeEachDialect('text records through the event log on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  /** A gateway on the event log whose projector is stopped: events stay pending until `catchUp`. */
  async function start(): Promise<{ gw: TestGateway; log: RecordLog }> {
    gateway = await startGateway(dialect, {
      config: testConfig({
        accounting: { event_log: true },
        postgres: { named_statements: true, batch_money: false },
      }),
    });
    const log = gateway.services.requests.records.log;
    if (log === undefined) throw new Error('the event log is not on');
    await log.stop();
    return { gw: gateway, log };
  }

  /**
   * Applies every pending event. On PostgreSQL the projector applies only what is below the
   * server's xmin (events/projector.ts), which another test file's open transaction holds back.
   */
  async function applyAll(gw: TestGateway, log: RecordLog): Promise<number> {
    let applied = 0;
    const deadline = Date.now() + 60_000;
    while (Number(await countEvents(gw)) > 0) {
      if (Date.now() > deadline) throw new Error('the projector never caught up');
      applied += await log.catchUp();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return applied;
  }

  const countEvents = async (gw: TestGateway) =>
    (
      await gw.services.store.db
        .selectFrom('events')
        .select(({ fn }) => fn.countAll<number>().as('count'))
        .executeTakeFirstOrThrow()
    ).count;
  const tableRow = (gw: TestGateway, id: string) =>
    gw.services.store.db
      .selectFrom('requests')
      .select(['status', 'amount'])
      .where('id', '=', id)
      .executeTakeFirst();

  it('a paid chat is charged once, read and replayed exactly before and after the projector writes its record', async () => {
    const { gw, log } = await start();
    const { key, accountId } = await gw.account(10_000_000);
    const idempotencyKey = randomUUID();
    const fresh = await gw.call('POST', '/v1/chat/completions', {
      key,
      body: CHAT,
      idempotencyKey,
    });
    expect(fresh.statusCode).toBe(200);
    const id = String(fresh.headers['x-service-request-id']);
    const charged = await gw.balance(accountId);
    expect(charged.held).toBe(0);
    expect(charged.balance).toBeLessThan(10_000_000);

    // Pending: the claim and the capture are in the log, nothing in the tables yet.
    expect(Number(await countEvents(gw))).toBe(2);
    expect(await tableRow(gw, id)).toBeUndefined();
    const pendingView = await gw.call('GET', `/v1/requests/${id}`, { key });
    expect(pendingView.statusCode).toBe(200);
    expect(pendingView.json()).toMatchObject({
      status: 'succeeded',
      bill: { amount: 10_000_000 - charged.balance, captured: true },
      reserve: { state: 'captured' },
    });
    const pendingReplay = await gw.call('POST', '/v1/chat/completions', {
      key,
      body: CHAT,
      idempotencyKey,
    });
    expect(pendingReplay.headers['idempotent-replayed']).toBe('true');
    expect(pendingReplay.body).toBe(fresh.body);
    const byKey = await gw.call('GET', `/v1/requests?idempotency_key=${idempotencyKey}`, { key });
    expect(byKey.json()).toMatchObject({ id, status: 'succeeded' });
    // The ledger counts the pending events as the rows they will become.
    expect((await checkLedger(gw.services.store.db)).violations).toEqual([]);
    // The backlog shows on /metrics.
    const metrics = async () => (await gw.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(await metrics()).toMatch(/^tollgate_event_log_pending 2$/m);
    expect(await metrics()).toMatch(/^tollgate_event_log_oldest_seconds \d/m);

    expect(await applyAll(gw, log)).toBe(2);
    expect(Number(await countEvents(gw))).toBe(0);
    expect(await metrics()).toMatch(/^tollgate_event_log_pending 0$/m);
    expect(await metrics()).toMatch(/^tollgate_event_log_oldest_seconds 0$/m);
    expect(await tableRow(gw, id)).toMatchObject({ status: 'succeeded' });
    expect((await gw.call('GET', `/v1/requests/${id}`, { key })).json()).toEqual(
      pendingView.json(),
    );
    const replay = await gw.call('POST', '/v1/chat/completions', {
      key,
      body: CHAT,
      idempotencyKey,
    });
    expect(replay.body).toBe(fresh.body);
    expect(await gw.balance(accountId)).toEqual(charged);
  });

  it('a second claim of a pending idempotency key is refused, and another key never sees the record', async () => {
    const { gw } = await start();
    const { key, accountId } = await gw.account(10_000_000);
    const other = await gw.account(10_000_000);
    const idempotencyKey = randomUUID();
    const first = await gw.call('POST', '/v1/chat/completions', {
      key,
      body: CHAT,
      idempotencyKey,
    });
    const id = String(first.headers['x-service-request-id']);
    const conflict = await gw.call('POST', '/v1/chat/completions', {
      key,
      body: { ...CHAT, messages: [{ role: 'user', content: 'something else' }] },
      idempotencyKey,
    });
    expect(conflict.statusCode).toBe(409);
    expect(conflict.json()).toMatchObject({ error: { code: 'IDEMPOTENCY_CONFLICT' } });
    expect((await gw.call('GET', `/v1/requests/${id}`, { key: other.key })).statusCode).toBe(404);
    const before = await gw.balance(accountId);
    // The same idempotency key on another API key is another request.
    const elsewhere = await gw.call('POST', '/v1/chat/completions', {
      key: other.key,
      body: CHAT,
      idempotencyKey,
    });
    expect(elsewhere.statusCode).toBe(200);
    expect(elsewhere.headers['x-service-request-id']).not.toBe(id);
    expect(await gw.balance(accountId)).toEqual(before);
  });

  it('concurrent sends of one idempotency key charge once', async () => {
    const { gw, log } = await start();
    const { key, accountId } = await gw.account(10_000_000);
    const idempotencyKey = randomUUID();
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        gw.call('POST', '/v1/chat/completions', { key, body: CHAT, idempotencyKey }),
      ),
    );
    const ids = new Set(answers.map((answer) => answer.headers['x-service-request-id']));
    expect(answers.filter((answer) => answer.statusCode === 200).length).toBeGreaterThan(0);
    for (const answer of answers) expect([200, 409]).toContain(answer.statusCode);
    await applyAll(gw, log);
    const records = await gw.services.store.db
      .selectFrom('requests')
      .select('id')
      .where('account_id', '=', accountId)
      .execute();
    expect(records).toHaveLength(1);
    expect(ids.has(records[0]?.id)).toBe(true);
    const captures = await gw.services.store.db
      .selectFrom('journal')
      .select('id')
      .where('account_id', '=', accountId)
      .where('kind', '=', 'capture')
      .execute();
    expect(captures).toHaveLength(1);
  });

  it('a record read while the projector applies it is found, in the log or in the table', async () => {
    const { gw, log } = await start();
    const { key } = await gw.account(10_000_000);
    const fresh = await gw.call('POST', '/v1/chat/completions', { key, body: CHAT });
    const id = String(fresh.headers['x-service-request-id']);
    // The projector applies the request between the overlay's two reads: the table read finds
    // nothing, and only the log read before it still holds the events.
    const read = await log.overlay(gw.services.store.db, id, async () => {
      expect(await tableRow(gw, id)).toBeUndefined();
      await applyAll(gw, log);
      return undefined; // what the table read found, just before the apply
    });
    expect(read).toMatchObject({ id, status: 'succeeded', hold_state: 'captured' });
  });

  it('a claim refused for funds writes nothing to the log', async () => {
    const { gw } = await start();
    const { key, accountId } = await gw.account(1);
    const refused = await gw.call('POST', '/v1/chat/completions', { key, body: CHAT });
    expect(refused.statusCode).toBe(402);
    expect(Number(await countEvents(gw))).toBe(0);
    expect(await gw.balance(accountId)).toEqual({ balance: 1, held: 0, available: 1 });
  });

  it('the ledger check finds a pending money event whose movement the account never made', async () => {
    const { gw, log } = await start();
    const { key } = await gw.account(10_000_000);
    const fresh = await gw.call('POST', '/v1/chat/completions', { key, body: CHAT });
    const id = String(fresh.headers['x-service-request-id']);
    // Inflate the pending capture: the account was charged the real amount, not this one.
    await gw.services.store.db
      .updateTable('events')
      .set((eb) => ({ amount: eb('amount', '+', 1) }))
      .where('request_id', '=', id)
      .where('kind', '=', 'money')
      .execute();
    const report = await checkLedger(gw.services.store.db);
    expect(report.violations.map((violation) => violation.invariant)).toContain('journal_replay');
    // Put right (the test's own damage): the same check is clean again.
    await gw.services.store.db
      .updateTable('events')
      .set((eb) => ({ amount: eb('amount', '-', 1) }))
      .where('request_id', '=', id)
      .where('kind', '=', 'money')
      .execute();
    expect((await checkLedger(gw.services.store.db)).violations).toEqual([]);
    await applyAll(gw, log);
  });

  it('a streamed chat replays its transcript before and after its record is written', async () => {
    const { gw, log } = await start();
    const { key } = await gw.account(10_000_000);
    const idempotencyKey = randomUUID();
    const body = { ...CHAT, stream: true };
    const fresh = await gw.call('POST', '/v1/chat/completions', { key, body, idempotencyKey });
    expect(fresh.statusCode).toBe(200);
    expect(fresh.body).toContain('[DONE]');
    const pending = await gw.call('POST', '/v1/chat/completions', { key, body, idempotencyKey });
    expect(pending.headers['idempotent-replayed']).toBe('true');
    expect(pending.body).toBe(fresh.body);
    await applyAll(gw, log);
    const applied = await gw.call('POST', '/v1/chat/completions', { key, body, idempotencyKey });
    expect(applied.body).toBe(fresh.body);
  });

  it("the wallet's open holds add up to held while claims and finishes are pending", async () => {
    const { gw, log } = await start();
    const { key, accountId } = await gw.account(10_000_000);
    const wallets = new Wallets(gw.services.store.db, gw.services.accounts);
    const identity = () => requestIdentity(gw.services, key);
    const claimed = [await identity(), await identity(), await identity()];
    const holds: string[] = [];
    for (const request of claimed) {
      const claim = await gw.services.requests.claim(request, {
        amount: 1_000,
        priceVersion: 'sim-embed@1',
      });
      if (claim.kind !== 'claimed' || claim.holdId === null) throw new Error('not claimed');
      holds.push(claim.holdId);
    }
    const listed = async () => {
      const wallet = await wallets.read(accountId);
      expect(wallet.holds.reduce((sum, hold) => sum + hold.amount, 0)).toBe(wallet.held);
      // Claimed in the same millisecond, listed by hold id: compared in request order.
      return wallet.holds
        .map((hold) => [hold.request_id, hold.status])
        .sort(([a], [b]) => String(a).localeCompare(String(b)));
    };
    // Three pending claims: all three listed, nothing in the tables yet.
    expect(await listed()).toEqual(
      claimed
        .map((request) => [request.requestId, 'processing'])
        .sort(([a], [b]) => a!.localeCompare(b!)),
    );
    // One applied, then finished (pending money): gone from the list at once.
    const [first, second] = claimed;
    await gw.services.store.db.transaction().execute(async (trx) => {
      await gw.services.requests.records.applyPending(trx, first!.requestId);
    });
    await gw.services.requests.finish(first!, holds[0]!, succeededOutcome(10));
    // One pending claim finished more expensively than the account can pay: awaiting funds, held.
    await gw.services.requests.finish(second!, holds[1]!, succeededOutcome(20_000_000));
    expect(await listed()).toEqual(
      [
        [second!.requestId, 'awaiting_funds'],
        [claimed[2]!.requestId, 'processing'],
      ].sort(([a], [b]) => a!.localeCompare(b!)),
    );
    await applyAll(gw, log);
    expect(await listed()).toEqual(
      [
        [second!.requestId, 'awaiting_funds'],
        [claimed[2]!.requestId, 'processing'],
      ].sort(([a], [b]) => a!.localeCompare(b!)),
    );
    await gw.services.requests.finish(claimed[2]!, holds[2]!, {
      kind: 'failed',
      error: new ApiError('UPSTREAM_ERROR', 'the upstream refused it'),
      upstreamRequestId: null,
    });
    expect(await listed()).toEqual([[second!.requestId, 'awaiting_funds']]);
  });

  it.each([
    ['in the same batch as its claim', false],
    ['after its claim was applied', true],
  ])(
    'two finishes of one request applied together end as the last one says, charged once (%s)',
    async (_, claimApplied) => {
      const { gw, log } = await start();
      const { key, accountId } = await gw.account(10_000_000);
      const request = await requestIdentity(gw.services, key);
      const claim = await gw.services.requests.claim(request, {
        amount: 1_000,
        priceVersion: 'sim-embed@1',
      });
      if (claim.kind !== 'claimed' || claim.holdId === null) throw new Error('not claimed');
      if (claimApplied) await applyAll(gw, log);
      // Given up on (submission_unknown, hold kept), then answered late: both events pending.
      await gw.services.requests.finish(request, claim.holdId, unknownOutcome);
      await gw.services.requests.finish(request, claim.holdId, succeededOutcome(10));
      expect(Number(await countEvents(gw))).toBe(claimApplied ? 2 : 3);
      const pending = await gw.services.requests.records.byId(request.requestId);
      expect(pending).toMatchObject({ status: 'succeeded', amount: 10, hold_state: 'captured' });
      await applyAll(gw, log);
      expect(await tableRow(gw, request.requestId)).toEqual({ status: 'succeeded', amount: 10 });
      expect(await gw.services.requests.records.byId(request.requestId)).toEqual(pending);
      expect(await gw.balance(accountId)).toEqual({
        balance: 10_000_000 - 10,
        held: 0,
        available: 10_000_000 - 10,
      });
    },
  );

  if (dialect.name === 'postgres')
    it('is refused at start beside the batched money paths, which do not write the log', async () => {
      await expect(
        startGateway(dialect, {
          config: testConfig({
            accounting: { event_log: true },
            postgres: { named_statements: true, batch_money: true },
          }),
        }),
      ).rejects.toThrow(/postgres\.batch_money: false/);
    });
});
