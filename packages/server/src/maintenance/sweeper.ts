import type { Logger } from 'pino';
import { reclaimUnusedObjects } from '../assets/asset-objects.js';
import type { Config } from '../config/schema.js';
import type { Services } from '../services.js';
import { expireUnsettledTasks } from '../tasks/task-expiry.js';

/** How often stale work is swept. */
export const SWEEP_INTERVAL_MS = 60_000;

/**
 * How old a `processing` record must be before its instance is presumed dead: twice the longest
 * an upstream call may take (connect, first byte and one idle gap) with the longest queue wait.
 */
export function staleAfterMs(config: Config): number {
  return (
    Math.max(
      ...Object.values(config.upstreams).map(
        (upstream) =>
          upstream.queue_timeout_ms +
          upstream.timeouts.connect_ms +
          upstream.timeouts.first_byte_ms +
          upstream.timeouts.idle_ms,
      ),
    ) * 2
  );
}

/**
 * How often a long stream refreshes its record (requests/record-heartbeat.ts): a quarter of the
 * stale age. A live stream sends a chunk at least every `idle_ms` (else it ends as stalled), so
 * its record is never older than this plus `idle_ms`, at most three quarters of the stale age:
 * the sweeper never takes it for one left by a dead instance, with room for a late sweep and
 * some clock skew between instances.
 */
export function heartbeatEveryMs(config: Config): number {
  return Math.max(1, Math.floor(staleAfterMs(config) / 4));
}

export interface Sweeper {
  /** The sweep started at once, so a gateway that restarts often still sweeps. */
  readonly first: Promise<void>;
  stop(): void;
}

/**
 * Marks records left `processing` by a dead instance (no finish and no heartbeat for
 * `staleAfterMs`) as `submission_unknown` (hold kept), expires tasks left unsettled past their
 * settlement window (task-expiry.ts), purges expired records and reclaims unused asset bytes: once at start, then every `intervalMs`, one sweep at a time. Failures are
 * logged, never thrown.
 */
export function startSweeper(
  services: Pick<Services, 'requests' | 'store' | 'assets' | 'clock' | 'ids' | 'taskStore'>,
  options: { config: Config; logger: Logger; intervalMs?: number },
): Sweeper {
  const staleAfter = staleAfterMs(options.config);
  let sweeping: Promise<void> | undefined;
  const sweep = (): Promise<void> => {
    // One sweep at a time: a slow storage must not pile sweeps up.
    if (sweeping !== undefined) return sweeping;
    const now = services.clock.now();
    sweeping = Promise.all([
      services.requests.markStaleAsUnknown(now - staleAfter),
      services.requests.records.purgeExpired(now),
      reclaimUnusedObjects(services.store.db, services.assets, { now }),
      expireUnsettledTasks(
        {
          db: services.store.db,
          tasks: services.taskStore,
          effects: { clock: services.clock, ids: services.ids },
        },
        now,
      ),
    ])
      .then(([stale, purged, objects, expiredTasks]) => {
        if (stale > 0 || purged > 0 || objects.reclaimed > 0 || expiredTasks > 0)
          options.logger.info(
            { stale, purged, reclaimedObjects: objects.reclaimed, expiredTasks },
            'swept',
          );
      })
      .catch((error: unknown) => options.logger.error({ err: error }, 'sweep failed'))
      .finally(() => (sweeping = undefined));
    return sweeping;
  };
  const timer = setInterval(() => void sweep(), options.intervalMs ?? SWEEP_INTERVAL_MS);
  timer.unref();
  return { first: sweep(), stop: () => clearInterval(timer) };
}
