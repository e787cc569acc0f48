import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterEach, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { notReceivedAfterMsOf, type ConfigFile } from '../../src/config/schema.js';
import { startSweeper, staleAfterMs, sweeperReconciler } from '../../src/maintenance/sweeper.js';
import type { RequestLookupAnswer } from '../../src/providers/request-lookup.js';
import type { RecordRow } from '../../src/requests/record-view.js';
import {
  RequestReconciler,
  type ReconcilerOptions,
} from '../../src/requests/request-reconciler.js';
import { describeEachDialect } from '../helpers/dialects.js';
import {
  manualClock,
  shortTimeoutsConfig,
  startGateway,
  testConfig,
  type TestGateway,
} from '../helpers/gateway.js';
import { unknownOutcome } from '../helpers/records.js';

/**
 * A request killed mid-flight ends `submission_unknown` with its hold kept. Where the upstream
 * can be asked (`request_lookup`), the sweeper's reconciler resolves it: done upstream → the
 * looked-up usage is charged (never above the hold), record `succeeded`; never received → once
 * the upstream has said so for its window (test/requests/never-received-window.test.ts) the hold
 * is released, record `failed`; a failed look-up, or an upstream that
 * cannot be asked, leaves it for later or for the operator (docs/requests.md "Reconciled by
 * look-up"). The money is checked from the outside: balance, journal, record, ledger check.
 */

const withLookup = (config: ConfigFile = testConfig()): ConfigFile => ({
  ...config,
  upstreams: Object.fromEntries(
    Object.entries(config.upstreams ?? {}).map(([name, upstream]) => [
      name,
      { ...upstream, request_lookup: true },
    ]),
  ),
});
const staleAge = staleAfterMs(parseConfig(testConfig(), 'test'));
const silent = pino({ level: 'silent' });

describeEachDialect('request look-up reconciliation on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  const clock = manualClock();
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  async function start(config: ConfigFile = withLookup()): Promise<TestGateway> {
    gateway = await startGateway(dialect, { clock, config });
    return gateway;
  }

  function reconciler(gw: TestGateway, options: Partial<ReconcilerOptions> = {}) {
    return sweeperReconciler(gw.services, {
      config: gw.services.config,
      logger: silent,
      reconciler: options,
    });
  }

  /**
   * A request of `key` holding `hold` whose answer was lost (`submission_unknown`), as after a
   * kill between the upstream's answer and the finish. With `input`, the embeddings call was
   * really made upstream under the record's id first (the upstream did the work).
   */
  async function lostAnswer(
    gw: TestGateway,
    key: string,
    hold: number,
    input?: string,
  ): Promise<{ requestId: string; holdId: string; promptTokens: number | null }> {
    const principal = await gw.services.keys.authenticate(key);
    const identity = {
      requestId: gw.services.ids.next('req'),
      principal,
      idempotencyKey: randomUUID(),
      fingerprint: 'f',
      method: 'POST',
      path: '/v1/embeddings',
      model: 'sim-embed',
    };
    const claim = await gw.services.requests.claim(identity, {
      amount: hold,
      priceVersion: 'sim-embed@1',
    });
    if (claim.kind !== 'claimed' || claim.holdId === null) throw new Error('not claimed');
    let promptTokens: number | null = null;
    if (input !== undefined) {
      const result = await gw.services.providers
        .embeddings('simulator', { accountId: principal.accountId, requestId: identity.requestId })
        .embed({ model: 'sim-embed', input: [input], dimensions: 8 });
      promptTokens = result.promptTokens;
    }
    await gw.services.requests.finish(identity, claim.holdId, unknownOutcome);
    return { requestId: identity.requestId, holdId: claim.holdId, promptTokens };
  }

  async function record(gw: TestGateway, id: string): Promise<RecordRow> {
    const row = await gw.services.requests.records.byId(id);
    if (row === undefined) throw new Error(`no record ${id}`);
    return row;
  }

  /** The journal lines of one hold, by kind (one clock instant: their order is not asserted). */
  async function journalOf(gw: TestGateway, holdId: string) {
    const lines = await gw.services.store.db
      .selectFrom('journal')
      .select(['kind', 'balance_delta', 'held_delta'])
      .where('hold_id', '=', holdId)
      .execute();
    return lines.sort((left, right) => left.kind.localeCompare(right.kind));
  }

  it('charges the usage the upstream reports for a call whose answer was lost, and marks it succeeded by look-up', async () => {
    const gw = await start();
    const { accountId, key } = await gw.account(1_000_000);
    const lost = await lostAnswer(gw, key, 50_000, 'alpha beta gamma delta');
    expect(lost.promptTokens).toBeGreaterThan(0);
    expect((await record(gw, lost.requestId)).status).toBe('submission_unknown');

    const counts = await reconciler(gw).reconcile();

    // sim-embed: 500,000 micro-yuan per million prompt tokens, rounded up.
    const expected = Math.ceil(((lost.promptTokens ?? 0) * 500_000) / 1_000_000);
    expect(counts).toEqual({ captured: 1, released: 0, left: 0 });
    const row = await record(gw, lost.requestId);
    expect(row.status).toBe('succeeded');
    expect(row.hold_state).toBe('captured');
    expect(row.amount).toBe(expected);
    expect(JSON.parse(row.usage ?? 'null')).toEqual({
      prompt_tokens: lost.promptTokens,
      total_tokens: lost.promptTokens,
    });
    expect(JSON.parse(row.resolution ?? 'null')).toMatchObject({
      action: 'capture',
      amount: expected,
      by: 'lookup',
    });
    expect(await gw.balance(accountId)).toEqual({
      balance: 1_000_000 - expected,
      held: 0,
      available: 1_000_000 - expected,
    });
    const journal = await journalOf(gw, lost.holdId);
    expect(journal.map((line) => line.kind)).toEqual(['capture', 'hold']);
    expect(journal[0]?.balance_delta).toBe(-expected);
  });

  it('never charges more than the hold, whatever usage the upstream reports', async () => {
    const gw = await start();
    const { accountId, key } = await gw.account(1_000_000);
    const lost = await lostAnswer(gw, key, 1, 'many words here so the usage prices above one');
    expect(Math.ceil(((lost.promptTokens ?? 0) * 500_000) / 1_000_000)).toBeGreaterThan(1);

    await reconciler(gw).reconcile();

    const row = await record(gw, lost.requestId);
    expect(row.status).toBe('succeeded');
    expect(row.amount).toBe(1);
    expect(row.usage_flag).toMatch(/above the hold 1/);
    expect((await gw.balance(accountId)).balance).toBe(999_999);
  });

  it('releases a call the upstream never received once the grace period has passed, not before', async () => {
    const gw = await start();
    const { accountId, key } = await gw.account(1_000_000);
    const lost = await lostAnswer(gw, key, 40_000);
    const grace = 10 * 60_000;
    // The upstream's "never received" window is met at once (a window of 0): the grace decides.
    const pass = reconciler(gw, { graceMs: grace, notReceivedAfterMs: () => 0 });

    clock.advance(grace - 1);
    expect(await pass.reconcile()).toEqual({ captured: 0, released: 0, left: 1 });
    expect((await record(gw, lost.requestId)).status).toBe('submission_unknown');
    expect((await gw.balance(accountId)).held).toBe(40_000);

    clock.advance(1);
    expect(await pass.reconcile()).toEqual({ captured: 0, released: 1, left: 0 });
    const row = await record(gw, lost.requestId);
    expect(row.status).toBe('failed');
    expect(row.hold_state).toBe('released');
    expect(JSON.parse(row.resolution ?? 'null')).toMatchObject({
      action: 'release',
      amount: 0,
      by: 'lookup',
    });
    expect(await gw.balance(accountId)).toEqual({
      balance: 1_000_000,
      held: 0,
      available: 1_000_000,
    });
    expect((await journalOf(gw, lost.holdId)).map((line) => line.kind)).toEqual([
      'hold',
      'release',
    ]);
  });

  it('leaves the record alone while look-ups fail, and asks again only after the backoff', async () => {
    const gw = await start();
    const { accountId, key } = await gw.account(1_000_000);
    const lost = await lostAnswer(gw, key, 30_000);
    clock.advance(staleAge * 10);
    let asked = 0;
    let failing = true;
    const flaky = new RequestReconciler(
      {
        db: gw.services.store.db,
        effects: { clock, ids: gw.services.ids },
        records: gw.services.requests.records,
        prices: gw.services.prices,
        models: gw.services.config.models,
        lookupOf: () => (): Promise<RequestLookupAnswer> => {
          asked += 1;
          return failing
            ? Promise.reject(new Error('connection refused'))
            : Promise.resolve({ status: 'not_received' });
        },
        logger: silent,
      },
      { graceMs: staleAge, notReceivedAfterMs: () => 0, backoffMs: 1_000 },
    );

    expect(await flaky.reconcile()).toEqual({ captured: 0, released: 0, left: 1 });
    expect(await flaky.reconcile()).toEqual({ captured: 0, released: 0, left: 0 });
    expect(asked).toBe(1);
    clock.advance(1_000);
    await flaky.reconcile();
    expect(asked).toBe(2);
    // A second failure doubles the wait.
    clock.advance(1_999);
    await flaky.reconcile();
    expect(asked).toBe(2);
    expect((await record(gw, lost.requestId)).status).toBe('submission_unknown');
    expect((await gw.balance(accountId)).held).toBe(30_000);

    failing = false;
    clock.advance(1);
    expect(await flaky.reconcile()).toEqual({ captured: 0, released: 1, left: 0 });
    expect((await record(gw, lost.requestId)).status).toBe('failed');
  });

  it('resolves each record once when two reconcilers run at the same time', async () => {
    const gw = await start();
    const { accountId, key } = await gw.account(10_000_000);
    const done = [];
    const neverSent = [];
    for (let index = 0; index < 6; index += 1) {
      done.push(await lostAnswer(gw, key, 50_000, `text number ${index} with some words`));
      neverSent.push(await lostAnswer(gw, key, 20_000));
    }
    clock.advance(staleAge);
    const [one, two] = [reconciler(gw), reconciler(gw)];

    const [first, second] = await Promise.all([one.reconcile(), two.reconcile()]);
    expect(first.captured + second.captured).toBe(6);
    // "Never received" is believed once it has been answered for the upstream's window.
    expect(first.released + second.released).toBe(0);
    clock.advance(notReceivedAfterMsOf(parseConfig(testConfig(), 'test').upstreams['simulator']!));
    const [third, fourth] = await Promise.all([one.reconcile(), two.reconcile()]);
    expect(third.released + fourth.released).toBe(6);
    let charged = 0;
    for (const lost of done) {
      const row = await record(gw, lost.requestId);
      expect(row.status).toBe('succeeded');
      charged += row.amount ?? 0;
      expect((await journalOf(gw, lost.holdId)).map((line) => line.kind)).toEqual([
        'capture',
        'hold',
      ]);
    }
    for (const lost of neverSent) {
      expect((await record(gw, lost.requestId)).status).toBe('failed');
      expect((await journalOf(gw, lost.holdId)).map((line) => line.kind)).toEqual([
        'hold',
        'release',
      ]);
    }
    expect(charged).toBeGreaterThan(0);
    expect(await gw.balance(accountId)).toEqual({
      balance: 10_000_000 - charged,
      held: 0,
      available: 10_000_000 - charged,
    });
  });

  it('leaves records of an upstream without request_lookup for the operator', async () => {
    const gw = await start(testConfig());
    const { accountId, key } = await gw.account(1_000_000);
    const lost = await lostAnswer(gw, key, 25_000, 'done upstream but nobody can ask');
    clock.advance(staleAge * 10);

    expect(await reconciler(gw).reconcile()).toEqual({ captured: 0, released: 0, left: 0 });

    expect((await record(gw, lost.requestId)).status).toBe('submission_unknown');
    expect((await gw.balance(accountId)).held).toBe(25_000);
    const queue = await gw.admin('GET', '/admin/v1/requests?status=submission_unknown');
    expect((queue['data'] as { id: string }[]).map((item) => item.id)).toEqual([lost.requestId]);
  });

  it('names the record on the live call: a call still running upstream is never judged', async () => {
    // Through the route: the gateway gives up on a hanging call (submission_unknown); the
    // simulator still has it in progress under the record's id, so even long after the grace
    // period the reconciler leaves it (a call it never received would be released).
    const gw = await start(withLookup(shortTimeoutsConfig()));
    const { accountId, key } = await gw.account(1_000_000);
    const response = await gw.call('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input: 'slow [sim:hang]' },
    });
    const requestId = response.headers['x-service-request-id'] as string;
    expect((await record(gw, requestId)).status).toBe('submission_unknown');
    const held = (await gw.balance(accountId)).held;
    expect(held).toBeGreaterThan(0);
    clock.advance(staleAge * 10);

    const sweeper = startSweeper(gw.services, {
      config: gw.services.config,
      logger: silent,
      intervalMs: 3_600_000,
    });
    await sweeper.first;
    sweeper.stop();

    expect((await record(gw, requestId)).status).toBe('submission_unknown');
    expect((await gw.balance(accountId)).held).toBe(held);
  });

  it('resolves a record the sweeper finds stale in the same sweep (the gateway died mid-call)', async () => {
    const gw = await start();
    const { accountId, key } = await gw.account(1_000_000);
    const principal = await gw.services.keys.authenticate(key);
    const identity = {
      requestId: gw.services.ids.next('req'),
      principal,
      idempotencyKey: randomUUID(),
      fingerprint: 'f',
      method: 'POST',
      path: '/v1/embeddings',
      model: 'sim-embed',
    };
    const claim = await gw.services.requests.claim(identity, {
      amount: 60_000,
      priceVersion: 'sim-embed@1',
    });
    if (claim.kind !== 'claimed') throw new Error('not claimed');
    // The upstream answered; the instance died before recording it (the record stays processing).
    const result = await gw.services.providers
      .embeddings('simulator', { accountId, requestId: identity.requestId })
      .embed({ model: 'sim-embed', input: ['killed after the upstream answered'], dimensions: 8 });
    clock.advance(staleAge + 1);

    const sweeper = startSweeper(gw.services, {
      config: gw.services.config,
      logger: silent,
      intervalMs: 3_600_000,
    });
    await sweeper.first;
    sweeper.stop();

    const expected = Math.ceil((result.promptTokens * 500_000) / 1_000_000);
    const row = await record(gw, identity.requestId);
    expect(row.status).toBe('succeeded');
    expect(row.amount).toBe(expected);
    expect((await gw.balance(accountId)).balance).toBe(1_000_000 - expected);
  });
});
