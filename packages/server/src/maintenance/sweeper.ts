import type { Logger } from 'pino';
import { reclaimUnusedObjects } from '../assets/asset-objects.js';
import type { Config } from '../config/schema.js';
import { staleAfterMs } from '../requests/record-ages.js';
import { RequestReconciler, type ReconcilerOptions } from '../requests/request-reconciler.js';
import type { Services } from '../services.js';
import { expireUnsettledTasks } from '../tasks/task-expiry.js';

/** How often stale work is swept. */
export const SWEEP_INTERVAL_MS = 60_000;

// The ages the sweeper judges records by live below it, where the request path reads them too.
export { heartbeatEveryMs, staleAfterMs } from '../requests/record-ages.js';

export interface Sweeper {
  /** The sweep started at once, so a gateway that restarts often still sweeps. */
  readonly first: Promise<void>;
  stop(): void;
}

/** The reconciler of `submission_unknown` text records, as the sweeper runs it. */
export function sweeperReconciler(
  services: Pick<Services, 'requests' | 'store' | 'clock' | 'ids' | 'prices' | 'providers'>,
  options: { config: Config; logger: Logger; reconciler?: Partial<ReconcilerOptions> },
): RequestReconciler {
  return new RequestReconciler(
    {
      db: services.store.db,
      effects: {
        clock: services.clock,
        ids: services.ids,
        budgetTimeZone: options.config.budget_time_zone,
      },
      records: services.requests.records,
      prices: services.prices,
      models: options.config.models,
      lookupOf: (upstream) => services.providers.requestLookup(upstream),
      logger: options.logger,
    },
    {
      graceMs: staleAfterMs(options.config),
      notReceivedAfterMs: (upstream) => services.providers.notReceivedAfterMs(upstream),
      ...options.reconciler,
    },
  );
}

/**
 * Marks records left `processing` by a dead instance (no finish and no heartbeat for
 * `staleAfterMs`) as `submission_unknown` (hold kept), then reconciles such text records with
 * the upstreams that can look them up (requests/request-reconciler.ts), expires tasks left
 * unsettled past their settlement window (task-expiry.ts), purges expired records and reclaims
 * unused asset bytes: once at start, then every `intervalMs`, one sweep at a time. Failures are
 * logged, never thrown.
 */
export function startSweeper(
  services: Pick<
    Services,
    'requests' | 'store' | 'assets' | 'clock' | 'ids' | 'taskStore' | 'prices' | 'providers'
  >,
  options: {
    config: Config;
    logger: Logger;
    intervalMs?: number;
    reconciler?: Partial<ReconcilerOptions>;
  },
): Sweeper {
  const staleAfter = staleAfterMs(options.config);
  const reconciler = sweeperReconciler(services, options);
  let sweeping: Promise<void> | undefined;
  const sweep = (): Promise<void> => {
    // One sweep at a time: a slow storage must not pile sweeps up.
    if (sweeping !== undefined) return sweeping;
    const now = services.clock.now();
    sweeping = Promise.all([
      // Marked first, so a record just found stale is looked up in the same sweep.
      services.requests
        .markStaleAsUnknown(now - staleAfter)
        .then(async (stale) => ({ stale, reconciled: await reconciler.reconcile() })),
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
      .then(([{ stale, reconciled }, purged, objects, expiredTasks]) => {
        const { captured, released } = reconciled;
        if (
          stale > 0 ||
          purged > 0 ||
          objects.reclaimed > 0 ||
          expiredTasks > 0 ||
          captured > 0 ||
          released > 0
        )
          options.logger.info(
            {
              stale,
              purged,
              reclaimedObjects: objects.reclaimed,
              expiredTasks,
              lookedUp: { captured, released },
            },
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
