import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterEach, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { notReceivedAfterMsOf, type ConfigFile } from '../../src/config/schema.js';
import { staleAfterMs, sweeperReconciler } from '../../src/maintenance/sweeper.js';
import type { RequestLookupAnswer } from '../../src/providers/request-lookup.js';
import type { RecordRow } from '../../src/requests/record-view.js';
import {
  RequestReconciler,
  type ReconcilerOptions,
} from '../../src/requests/request-reconciler.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { manualClock, startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';
import { unknownOutcome } from '../helpers/records.js';

/**
 * Issue 35 item 17, text records: a `submission_unknown` chat, embeddings, rerank or OCR record
 * whose upstream's look-up (`request_lookup`) keeps answering "never received" (404) is failed
 * and its hold released — but only once the look-up has answered so for the upstream's
 * `not_received_after_ms` since its first such answer (longer than the upstream's timeouts, so a
 * call still on its way is never judged). A look-up that fails never counts toward the window;
 * an answer that the upstream has it ends the run; an operator may resolve it sooner. Money is
 * checked from the outside: balance, journal, record, ledger check.
 */

const BALANCE = 1_000_000;
const HOLD = 40_000;
const silent = pino({ level: 'silent' });

const withLookup = (notReceivedAfterMs?: number): ConfigFile => {
  const config = testConfig();
  return {
    ...config,
    upstreams: Object.fromEntries(
      Object.entries(config.upstreams ?? {}).map(([name, upstream]) => [
        name,
        {
          ...upstream,
          request_lookup: true,
          ...(notReceivedAfterMs === undefined
            ? {}
            : { not_received_after_ms: notReceivedAfterMs }),
        },
      ]),
    ),
  };
};
const parsed = parseConfig(withLookup(), 'test');
const staleAge = staleAfterMs(parsed);
/** The simulator upstream's default window: 10 minutes with the default timeouts. */
const defaultWindow = notReceivedAfterMsOf(parsed.upstreams['simulator']!);

describeEachDialect('a text call the upstream never received, on $name', (dialect) => {
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

  /** An embeddings record holding `HOLD` that never reached the upstream (`submission_unknown`). */
  async function neverSent(gw: TestGateway, key: string): Promise<{ id: string; holdId: string }> {
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
      amount: HOLD,
      priceVersion: 'sim-embed@1',
    });
    if (claim.kind !== 'claimed' || claim.holdId === null) throw new Error('not claimed');
    await gw.services.requests.finish(identity, claim.holdId, unknownOutcome);
    return { id: identity.requestId, holdId: claim.holdId };
  }

  async function record(gw: TestGateway, id: string): Promise<RecordRow> {
    const row = await gw.services.requests.records.byId(id);
    if (row === undefined) throw new Error(`no record ${id}`);
    return row;
  }

  async function journalKinds(gw: TestGateway, holdId: string): Promise<string[]> {
    const lines = await gw.services.store.db
      .selectFrom('journal')
      .select('kind')
      .where('hold_id', '=', holdId)
      .execute();
    return lines.map((line) => line.kind).sort();
  }

  async function expectUnchanged(gw: TestGateway, accountId: string, id: string) {
    const row = await record(gw, id);
    expect(row.status).toBe('submission_unknown');
    expect(row.hold_state).toBe('open');
    expect(await gw.balance(accountId)).toEqual({
      balance: BALANCE,
      held: HOLD,
      available: BALANCE - HOLD,
    });
  }

  async function expectReleased(
    gw: TestGateway,
    accountId: string,
    lost: { id: string; holdId: string },
  ) {
    const row = await record(gw, lost.id);
    expect(row.status).toBe('failed');
    expect(row.hold_state).toBe('released');
    expect(JSON.parse(row.resolution ?? 'null')).toMatchObject({
      action: 'release',
      amount: 0,
      by: 'lookup',
    });
    expect(await gw.balance(accountId)).toEqual({ balance: BALANCE, held: 0, available: BALANCE });
    expect(await journalKinds(gw, lost.holdId)).toEqual(['hold', 'release']);
  }

  /** A reconciler whose look-up answers what `answer` says (it throws to fail). */
  function scripted(
    gw: TestGateway,
    answer: () => Promise<RequestLookupAnswer>,
    options: Partial<ReconcilerOptions> = {},
  ) {
    return new RequestReconciler(
      {
        db: gw.services.store.db,
        effects: { clock, ids: gw.services.ids },
        records: gw.services.requests.records,
        prices: gw.services.prices,
        models: gw.services.config.models,
        lookupOf: () => answer,
        logger: silent,
      },
      {
        graceMs: staleAge,
        notReceivedAfterMs: () => defaultWindow,
        backoffMs: 1_000,
        maxBackoffMs: 1_000,
        ...options,
      },
    );
  }

  it('keeps the hold while the upstream has said "never received" for less than its window, then fails the record and releases it', async () => {
    const gw = await start();
    const { accountId, key } = await gw.account(BALANCE);
    const lost = await neverSent(gw, key);
    const pass = sweeperReconciler(gw.services, { config: gw.services.config, logger: silent });
    clock.advance(staleAge);

    // The simulator's real look-up answers 404 every time; the first answer starts the window.
    expect(await pass.reconcile()).toEqual({ captured: 0, released: 0, left: 1 });
    await expectUnchanged(gw, accountId, lost.id);
    clock.advance(defaultWindow - 1);
    expect(await pass.reconcile()).toEqual({ captured: 0, released: 0, left: 1 });
    await expectUnchanged(gw, accountId, lost.id);

    clock.advance(1);
    expect(await pass.reconcile()).toEqual({ captured: 0, released: 1, left: 0 });
    await expectReleased(gw, accountId, lost);
    // Once: a further pass finds nothing to do.
    expect(await pass.reconcile()).toEqual({ captured: 0, released: 0, left: 0 });
  });

  it("uses the upstream's configured not_received_after_ms", async () => {
    const window = 200_000;
    const gw = await start(withLookup(window));
    const { accountId, key } = await gw.account(BALANCE);
    const lost = await neverSent(gw, key);
    const pass = sweeperReconciler(gw.services, { config: gw.services.config, logger: silent });
    clock.advance(staleAge);
    await pass.reconcile();
    clock.advance(window - 1);
    await pass.reconcile();
    await expectUnchanged(gw, accountId, lost.id);
    clock.advance(1);
    expect(await pass.reconcile()).toEqual({ captured: 0, released: 1, left: 0 });
    await expectReleased(gw, accountId, lost);
  });

  it('never counts a look-up that fails toward the window', async () => {
    const gw = await start();
    const { accountId, key } = await gw.account(BALANCE);
    const lost = await neverSent(gw, key);
    let failing = true;
    const pass = scripted(gw, () =>
      failing
        ? Promise.reject(new Error('connection refused'))
        : Promise.resolve({ status: 'not_received' }),
    );
    clock.advance(staleAge);
    // Failing for three windows: never released.
    for (let step = 0; step < 6; step += 1) {
      expect(await pass.reconcile()).toEqual({ captured: 0, released: 0, left: 1 });
      clock.advance(defaultWindow / 2);
    }
    await expectUnchanged(gw, accountId, lost.id);

    // The first "never received" starts the window now, whatever failed before.
    failing = false;
    expect(await pass.reconcile()).toEqual({ captured: 0, released: 0, left: 1 });
    clock.advance(defaultWindow - 1_001);
    // A failure within the window changes nothing either way (asked again after its backoff).
    failing = true;
    expect(await pass.reconcile()).toEqual({ captured: 0, released: 0, left: 1 });
    failing = false;
    clock.advance(1_000);
    expect(await pass.reconcile()).toEqual({ captured: 0, released: 0, left: 1 });
    await expectUnchanged(gw, accountId, lost.id);
    clock.advance(1);
    expect(await pass.reconcile()).toEqual({ captured: 0, released: 1, left: 0 });
    await expectReleased(gw, accountId, lost);
  });

  it('starts the window again when the upstream says it has the call meanwhile', async () => {
    const gw = await start();
    const { accountId, key } = await gw.account(BALANCE);
    const lost = await neverSent(gw, key);
    let answer: RequestLookupAnswer = { status: 'not_received' };
    const pass = scripted(gw, () => Promise.resolve(answer));
    clock.advance(staleAge);
    await pass.reconcile();
    clock.advance(defaultWindow / 2);
    answer = { status: 'in_progress' };
    await pass.reconcile();
    answer = { status: 'not_received' };
    clock.advance(defaultWindow / 2);
    // A window since the first 404, but not a window of 404s in a row.
    expect(await pass.reconcile()).toEqual({ captured: 0, released: 0, left: 1 });
    await expectUnchanged(gw, accountId, lost.id);
    clock.advance(defaultWindow);
    expect(await pass.reconcile()).toEqual({ captured: 0, released: 1, left: 0 });
    await expectReleased(gw, accountId, lost);
  });

  it('lets an operator resolve it sooner; the look-up then changes nothing', async () => {
    const gw = await start();
    const { accountId, key } = await gw.account(BALANCE);
    const lost = await neverSent(gw, key);
    const pass = sweeperReconciler(gw.services, { config: gw.services.config, logger: silent });
    clock.advance(staleAge);
    await pass.reconcile();
    await gw.admin('POST', `/admin/v1/requests/${lost.id}/resolve`, {
      action: 'release',
      reason: 'the provider console shows no such call',
    });
    expect(await gw.balance(accountId)).toEqual({ balance: BALANCE, held: 0, available: BALANCE });
    clock.advance(defaultWindow);
    expect(await pass.reconcile()).toEqual({ captured: 0, released: 0, left: 0 });
    // The operator's resolution stands.
    expect(await record(gw, lost.id)).toMatchObject({ status: 'resolved', hold_state: 'released' });
    expect(JSON.parse((await record(gw, lost.id)).resolution ?? 'null')).toMatchObject({
      by: 'operator',
    });
    expect(await journalKinds(gw, lost.holdId)).toEqual(['hold', 'release']);
  });
});
