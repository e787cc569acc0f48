import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeOnPostgres } from '../helpers/dialects.js';
import { describeNeeding } from '../helpers/required-services.js';
import { redisService } from '../helpers/redis.js';
import { formatReport, runBattery } from './battery.js';
import { KEY_CACHE_TTL_MS, KEY_NOTICE_BOUND_MS, startCluster, type Cluster } from './cluster.js';
import { probeKeyDisable } from './key-disable-probe.js';
import { nginxService, redisServerService } from './programs.js';

/**
 * The crash-and-fault battery (issue 21; docs/deploy.md): three gateway processes on one
 * PostgreSQL and Redis behind the repository's nginx file, killed and faulted under a seeded
 * load, then every invariant checked. `npm test` runs the short form (≥ 20 kills, every fault
 * kind at least once); `npm run battery -- --long` the long one (≥ 100 kills), or
 * TOLLGATE_BATTERY_KILLS and TOLLGATE_BATTERY_SEED to choose.
 */
const long = process.env['TOLLGATE_BATTERY'] === 'long';
const kills = Number(process.env['TOLLGATE_BATTERY_KILLS'] ?? (long ? 100 : 20));
const seed = Number(process.env['TOLLGATE_BATTERY_SEED'] ?? 21);

describeOnPostgres('crash-and-fault battery on $name', () => {
  describeNeeding(redisService, 'with Redis', () => {
    describeNeeding(nginxService, 'behind nginx', () => {
      describeNeeding(redisServerService, 'with a private redis-server', () => {
        let cluster: Cluster | undefined;
        beforeAll(async () => {
          cluster = await startCluster(process.env['TOLLGATE_TEST_PG_URL'] ?? '');
        }, 120_000);
        afterAll(async () => cluster?.close(), 60_000);

        // Before the battery: three processes, no faults yet.
        it(`key disable seen by all three instances within ${KEY_NOTICE_BOUND_MS} ms (key cache TTL ${KEY_CACHE_TTL_MS} ms)`, async () => {
          if (cluster === undefined) throw new Error('the cluster did not start');
          expect(KEY_CACHE_TTL_MS).toBeGreaterThan(10 * KEY_NOTICE_BOUND_MS);
          const probe = await probeKeyDisable(cluster);
          console.log(
            `key disable refused by each instance after ${probe.refusedAfterMs.join(', ')} ms`,
          );
          expect(probe.before).toEqual([200, 200, 200]);
          for (const after of probe.refusedAfterMs) {
            expect(after).toBeDefined();
            expect(after).toBeLessThanOrEqual(KEY_NOTICE_BOUND_MS);
          }
        }, 30_000);

        it(
          `graceful rolling restart, then ${kills} kill -9s, database sessions killed, PostgreSQL and Redis restarted, upstream faults: nothing lost, nothing charged twice`,
          async () => {
            if (cluster === undefined) throw new Error('the cluster did not start');
            const report = await runBattery(cluster, { seed, kills, workers: 4 });
            console.log(formatReport(report));
            expect(report.kills).toBeGreaterThanOrEqual(kills);
            for (const count of Object.values(report.faults)) expect(count).toBeGreaterThan(0);
            expect(report.upstreamFaults).toBeGreaterThan(0);
            expect(report.rollingRestart.exitMs).toHaveLength(3);
            // No request in flight was lost to the graceful restarts: each one sent meanwhile was
            // answered, at the latest by a retry with its idempotency key.
            expect(report.rollingRestart.lost).toEqual([]);
            // The disabled-key check judged something (it is not all excused by fault windows).
            expect(report.disabledKeyAttempts.judged).toBeGreaterThan(0);
            expect(report.violations).toEqual([]);
          },
          (long ? 3_600 : 600) * 1000,
        );
      });
    });
  });
});
