import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { ApiError } from '../../src/errors/api-error.js';
import { startSweeper, staleAfterMs } from '../../src/maintenance/sweeper.js';
import { RECORD_MOVES, RecordMoveNotAllowed, canMove } from '../../src/requests/record-states.js';
import type { RecordRow } from '../../src/requests/record-view.js';
import type { Outcome } from '../../src/requests/request-service.js';
import { RequestStore } from '../../src/requests/request-store.js';
import { SettlementService } from '../../src/requests/settlement-service.js';
import type { RequestStatus } from '../../src/store/schema.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { requestIdentity } from '../helpers/records.js';
import {
  ADMIN_TOKEN,
  manualClock,
  startGateway,
  testConfig,
  type TestGateway,
} from '../helpers/gateway.js';

/**
 * A request record's status changes only through the store's guarded `transition`, along the
 * moves listed once in requests/record-states.ts (docs/requests.md "States and moves"). A
 * finish, a settle, an operator and the sweeper can all reach one record: whichever comes
 * second must find the state it expected or change nothing — no money, no record.
 */

const STATUSES = Object.keys(RECORD_MOVES) as RequestStatus[];
const staleAge = staleAfterMs(parseConfig(testConfig(), 'test'));

const succeeded = (amount: number): Outcome => ({
  kind: 'succeeded',
  body: { object: 'list', data: [] },
  usage: { prompt_tokens: 3, total_tokens: 3 },
  amount,
  pricingRule: `test: ${amount}`,
  upstreamRequestId: 'up-late',
});
const failed: Outcome = {
  kind: 'failed',
  error: new ApiError('UPSTREAM_ERROR', 'the upstream refused it'),
  upstreamRequestId: null,
};

// Every race below, with the records written directly and through the event log (decision 0019:
// the finishes are events, the writers after them apply the request's pending events first).
for (const eventLog of [false, true])
  describeEachDialect(
    `request record transitions on $name${eventLog ? ', event log on' : ''}`,
    (dialect) => {
      const config = testConfig({
        accounting: { event_log: eventLog },
        postgres: { named_statements: true, batch_money: !eventLog },
      });
      let gateway: TestGateway | undefined;
      let logged: { msg: string; [field: string]: unknown }[] = [];
      const clock = manualClock();
      afterEach(async () => {
        await gateway?.expectLedgerClean();
        await gateway?.close();
        gateway = undefined;
        logged = [];
      });

      async function start(): Promise<TestGateway> {
        const logger = pino(
          { level: 'info' },
          {
            write: (line: string) => void logged.push(JSON.parse(line) as (typeof logged)[number]),
          },
        );
        gateway = await startGateway(dialect, { clock, config, services: { logger } });
        return gateway;
      }

      /** A request of a new account (1,000,000 available) that holds `hold` and is still running. */
      async function running(gw: TestGateway, hold = 100) {
        const { accountId, key, keyId } = await gw.account(1_000_000);
        const identity = await requestIdentity(gw.services, key);
        const claim = await gw.services.requests.claim(identity, {
          amount: hold,
          priceVersion: 'sim-embed@1',
        });
        if (claim.kind !== 'claimed' || claim.holdId === null) throw new Error('not claimed');
        return { accountId, key, keyId, identity, holdId: claim.holdId };
      }

      async function record(gw: TestGateway, id: string): Promise<RecordRow> {
        const row = await gw.services.requests.records.byId(id);
        if (row === undefined) throw new Error(`no record ${id}`);
        return row;
      }

      /** One sweep, as the gateway runs it, after the request has aged past the stale age. */
      async function sweepAfterStaleAge(gw: TestGateway): Promise<void> {
        clock.advance(staleAge + 1);
        const sweeper = startSweeper(gw.services, {
          config: gw.services.config,
          logger: pino({ level: 'silent' }),
          intervalMs: 3_600_000,
        });
        await sweeper.first;
        sweeper.stop();
      }

      it('moves a record only along the listed moves, and only from the state it is in', async () => {
        const gw = await start();
        const { keyId, accountId } = await gw.account(0);
        const store = gw.services.requests.records;
        const db = gw.services.store.db;
        const recordIn = async (status: RequestStatus) => {
          const id = `req_${randomUUID()}`;
          await store.insertUnlessKeyUsed(db, {
            id,
            key_id: keyId,
            account_id: accountId,
            idempotency_key: randomUUID(),
            fingerprint: 'f',
            method: 'POST',
            path: '/v1/embeddings',
            model: null,
            status,
            http_status: null,
            response_body: null,
            error_code: null,
            usage: null,
            hold_id: null,
            reserve_amount: null,
            amount: null,
            price_version: null,
            pricing_rule: null,
            upstream_request_id: null,
            resolution: null,
            transcript: null,
            task_id: null,
            created_at: 1,
            updated_at: 1,
            expires_at: 2,
          });
          return id;
        };
        for (const from of STATUSES) {
          for (const to of STATUSES) {
            const id = await recordIn(from);
            const move = store.transition(db, id, from, to, { updated_at: 7, error_code: 'X' });
            if (canMove(from, to)) {
              await expect(move).resolves.toBe(true);
              expect(await record(gw, id)).toMatchObject({
                status: to,
                updated_at: 7,
                error_code: 'X',
              });
              // Compare-and-set: the same move again finds the record no longer in `from`
              // (unless it stayed there), and another writer's expected state is refused.
              const other = STATUSES.find((status) => status !== to && canMove(status, to));
              if (other !== undefined) {
                await expect(store.transition(db, id, other, to, { updated_at: 9 })).resolves.toBe(
                  false,
                );
                expect(await record(gw, id)).toMatchObject({ status: to, updated_at: 7 });
              }
            } else {
              await expect(move).rejects.toBeInstanceOf(RecordMoveNotAllowed);
              expect(await record(gw, id)).toMatchObject({ status: from, updated_at: 1 });
            }
          }
        }
        // The prepared hot-path outcome follows the same table and the same compare-and-set.
        const finished = await recordIn('failed');
        const outcome = {
          id: finished,
          upstream_request_id: null,
          updated_at: 8,
          transcript: null,
          http_status: 200,
          response_body: '{}',
          error_code: null,
          usage: null,
          amount: 1,
          pricing_rule: null,
          usage_flag: null,
          channel: null,
          channel_attempts: null,
          channel_cost: null,
          line_items: null,
        };
        await expect(
          store.recordOutcome(db, 'failed', { ...outcome, status: 'succeeded' }),
        ).rejects.toBeInstanceOf(RecordMoveNotAllowed);
        await expect(
          store.recordOutcome(db, 'processing', { ...outcome, status: 'succeeded' }),
        ).resolves.toBe(false);
        expect(await record(gw, finished)).toMatchObject({ status: 'failed', updated_at: 1 });
      });

      it('an accepted creation record never moves, and the sweeper leaves it alone', async () => {
        expect(RECORD_MOVES.accepted).toEqual([]);
        const gw = await start();
        const { identity } = await running(gw);
        const db = gw.services.store.db;
        const store = gw.services.requests.records;
        await expect(
          store.transition(db, identity.requestId, 'processing', 'accepted', {
            updated_at: clock.now(),
            http_status: 202,
            task_id: 'task_1',
          }),
        ).resolves.toBe(true);
        await sweepAfterStaleAge(gw);
        expect(await record(gw, identity.requestId)).toMatchObject({
          status: 'accepted',
          hold_state: 'open',
        });
      });

      it('the sweeper does not take a record that showed a sign of life after it looked', async () => {
        const gw = await start();
        const { identity } = await running(gw);
        clock.advance(staleAge + 1);
        // The sweeper found it stale as of now; a heartbeat lands before its guarded move.
        const olderThan = clock.now() - staleAge;
        const heartbeat = gw.services.requests.heartbeat(identity.requestId, 1_000);
        clock.advance(1_000);
        await heartbeat.beat();
        const swept = gw.services.requests.records.transition(
          gw.services.store.db,
          identity.requestId,
          'processing',
          'submission_unknown',
          { updated_at: clock.now() },
          { updatedBefore: olderThan },
        );
        await expect(swept).resolves.toBe(false);
        expect(await record(gw, identity.requestId)).toMatchObject({
          status: 'processing',
          updated_at: clock.now(),
          hold_state: 'open',
        });
      });

      it('refuses to settle a failed record: 409, nothing charged', async () => {
        const gw = await start();
        const { accountId, key, identity, holdId } = await running(gw);
        await gw.services.requests.finish(identity, holdId, failed);
        const before = await gw.balance(accountId);
        const settle = await gw.call('POST', `/v1/requests/${identity.requestId}/settle`, { key });
        expect(settle.statusCode).toBe(409);
        expect(settle.json<{ error: { code: string } }>().error.code).toBe(
          'SETTLEMENT_NOT_ALLOWED',
        );
        expect(await record(gw, identity.requestId)).toMatchObject({
          status: 'failed',
          hold_state: 'released',
        });
        expect(await gw.balance(accountId)).toEqual(before);
      });

      it('refuses to resolve a succeeded record: 409, nothing moved', async () => {
        const gw = await start();
        const { accountId, identity, holdId } = await running(gw);
        await gw.services.requests.finish(identity, holdId, succeeded(40));
        const before = await gw.balance(accountId);
        const resolve = await gw.app.inject({
          method: 'POST',
          url: `/admin/v1/requests/${identity.requestId}/resolve`,
          headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
          payload: { action: 'release', reason: 'stale view' },
        });
        expect(resolve.statusCode).toBe(409);
        expect(resolve.json<{ error: { code: string } }>().error.code).toBe(
          'SETTLEMENT_NOT_ALLOWED',
        );
        expect(await record(gw, identity.requestId)).toMatchObject({
          status: 'succeeded',
          amount: 40,
          hold_state: 'captured',
        });
        expect(await gw.balance(accountId)).toEqual(before);
      });

      /**
       * A store whose reads show the record as `shown` (a view taken before someone else moved it):
       * the service passes its own checks, and only the guard inside its transaction can refuse.
       */
      function staleView(gw: TestGateway, shown: Partial<RecordRow>): RequestStore {
        const store = new RequestStore(
          gw.services.store.db,
          false,
          gw.services.requests.records.log,
        );
        const read = store.byId.bind(store);
        store.byId = async (id, executor) => {
          const row = await read(id, executor);
          return row === undefined ? undefined : { ...row, ...shown };
        };
        return store;
      }

      it('a settle acting on a stale view rolls its capture back when the record is not awaiting funds', async () => {
        const gw = await start();
        const { accountId, identity, holdId } = await running(gw);
        const before = await gw.balance(accountId);
        const settlements = new SettlementService(
          gw.services.store.db,
          { clock, ids: gw.services.ids, moneyEvents: eventLog },
          staleView(gw, { status: 'awaiting_funds', amount: 150 }),
          gw.services.requests,
        );
        const settle = {
          ...identity,
          requestId: gw.services.ids.next('req'),
          idempotencyKey: randomUUID(),
          fingerprint: `settle ${identity.requestId}`,
          path: `/v1/requests/${identity.requestId}/settle`,
        };
        expect(await settlements.settle(settle, identity.requestId)).toMatchObject({
          kind: 'refused',
          error: { code: 'SETTLEMENT_NOT_ALLOWED' },
        });
        expect(await record(gw, identity.requestId)).toMatchObject({
          status: 'processing',
          amount: null,
          hold_state: 'open',
        });
        expect(await gw.balance(accountId)).toEqual(before);
        // The request still finishes normally afterwards.
        await gw.services.requests.finish(identity, holdId, succeeded(60));
        expect(await gw.balance(accountId)).toMatchObject({ balance: 1_000_000 - 60, held: 0 });
      });

      it('an operator resolution acting on a stale view rolls its release back when the record moved on', async () => {
        const gw = await start();
        const { accountId, identity, holdId } = await running(gw);
        const before = await gw.balance(accountId);
        const settlements = new SettlementService(
          gw.services.store.db,
          { clock, ids: gw.services.ids, moneyEvents: eventLog },
          staleView(gw, { status: 'submission_unknown' }),
          gw.services.requests,
        );
        for (const input of [
          { action: 'release', reason: 'looked dead' },
          { action: 'capture', amount: 30, reason: 'looked done' },
        ]) {
          await expect(settlements.resolve(identity.requestId, input)).rejects.toMatchObject({
            code: 'SETTLEMENT_NOT_ALLOWED',
          });
          expect(await record(gw, identity.requestId)).toMatchObject({
            status: 'processing',
            resolution: null,
            hold_state: 'open',
          });
          expect(await gw.balance(accountId)).toEqual(before);
        }
        await gw.services.requests.finish(identity, holdId, failed);
        expect(await gw.balance(accountId)).toEqual({
          balance: 1_000_000,
          held: 0,
          available: 1_000_000,
        });
      });

      it('a finish that comes after the sweeper records its confirmed outcome on the hold still open', async () => {
        const gw = await start();
        const { accountId, key, identity, holdId } = await running(gw);
        await sweepAfterStaleAge(gw);
        expect(await record(gw, identity.requestId)).toMatchObject({
          status: 'submission_unknown',
          hold_state: 'open',
        });
        const answer = await gw.services.requests.finish(identity, holdId, succeeded(60));
        expect(answer.status).toBe(200);
        const view = (await gw.call('GET', `/v1/requests/${identity.requestId}`, { key })).json();
        expect(view).toMatchObject({
          status: 'succeeded',
          http_status: 200,
          result: { object: 'list' },
          bill: { amount: 60, captured: true },
          reserve: { state: 'captured' },
          upstream_request_id: 'up-late',
        });
        expect(await gw.balance(accountId)).toMatchObject({ balance: 1_000_000 - 60, held: 0 });
      });

      it('a failure that comes after the sweeper releases the hold', async () => {
        const gw = await start();
        const { accountId, identity, holdId } = await running(gw);
        await sweepAfterStaleAge(gw);
        const answer = await gw.services.requests.finish(identity, holdId, failed);
        expect(answer.status).toBe(502);
        expect(await record(gw, identity.requestId)).toMatchObject({
          status: 'failed',
          error_code: 'UPSTREAM_ERROR',
          hold_state: 'released',
        });
        expect(await gw.balance(accountId)).toMatchObject({ balance: 1_000_000, held: 0 });
      });

      it.each(['release', 'capture'] as const)(
        'a finish that comes after an operator resolved the record (%s) moves no money, keeps the resolution and is logged',
        async (action) => {
          const gw = await start();
          const { accountId, identity, holdId } = await running(gw);
          await sweepAfterStaleAge(gw);
          await gw.admin('POST', `/admin/v1/requests/${identity.requestId}/resolve`, {
            action,
            ...(action === 'capture' ? { amount: 25 } : {}),
            reason: 'no answer from the upstream',
          });
          const resolved = await record(gw, identity.requestId);
          const before = await gw.balance(accountId);

          const answer = await gw.services.requests.finish(identity, holdId, succeeded(60));

          // The caller is told what the record says (as a replay would), not the late result.
          expect(answer.status).toBe(502);
          expect(answer.body).toMatchObject({ error: { code: 'UPSTREAM_ERROR' } });
          expect(await record(gw, identity.requestId)).toEqual(resolved);
          expect(await gw.balance(accountId)).toEqual(before);
          // Not lost silently: the outcome is logged with what an operator needs to reconcile.
          expect(logged).toContainEqual(
            expect.objectContaining({
              requestId: identity.requestId,
              recordStatus: 'resolved',
              outcome: 'succeeded',
              amount: 60,
              upstreamRequestId: 'up-late',
            }),
          );
        },
      );

      it('finishes racing the sweeper end captured exactly once, whoever wins', async () => {
        const gw = await start();
        const requests = await Promise.all(Array.from({ length: 8 }, () => running(gw)));
        clock.advance(staleAge + 1);
        await Promise.all([
          gw.services.requests.markStaleAsUnknown(clock.now() - staleAge),
          ...requests.map(({ identity, holdId }) =>
            gw.services.requests.finish(identity, holdId, succeeded(60)),
          ),
          gw.services.requests.markStaleAsUnknown(clock.now() - staleAge),
        ]);
        for (const { accountId, identity } of requests) {
          expect(await record(gw, identity.requestId)).toMatchObject({
            status: 'succeeded',
            amount: 60,
            hold_state: 'captured',
          });
          expect(await gw.balance(accountId)).toMatchObject({ balance: 1_000_000 - 60, held: 0 });
        }
      });
    },
  );

describe('request record writers', () => {
  it('no module but the record store writes a request record', () => {
    const source = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src');
    const writers = (readdirSync(source, { recursive: true }) as string[])
      .filter((file) => file.endsWith('.ts'))
      .filter((file) =>
        /updateTable\(\s*'requests'\s*\)|update requests\b/.test(
          readFileSync(path.join(source, file), 'utf8'),
        ),
      )
      .map((file) => file.split(path.sep).join('/'));
    // The usage review writes only its own two columns, guarded, never the status.
    // The event log's projector writes what the logged claims and finishes carry; PostgreSQL's
    // batched captures write their batch's outcomes in one statement, with the same columns.
    expect(writers.sort()).toEqual([
      'requests/batched-capture.ts',
      'requests/record-projection.ts',
      'requests/request-store.ts',
      'requests/usage-review-service.ts',
    ]);
  });
});
