import { Redis } from 'ioredis';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { AccountService } from './accounts/account-service.js';
import { createAssetStorage, type StorageSecrets } from './assets/create-storage.js';
import { KeyService } from './auth/key-service.js';
import { PriceBook } from './billing/price-book.js';
import { pricesOutOfSync, type PriceWarning } from './billing/price-warnings.js';
import type { Config } from './config/schema.js';
import { perAccountConcurrency } from './config/task-engine-schema.js';
import { ConsoleSessions } from './console/console-sessions.js';
import { ConsoleUsers } from './console/console-users.js';
import { LoginThrottle } from './console/login-throttle.js';
import type { AppDeps } from './http/deps.js';
import { Metrics } from './http/metrics.js';
import { ModelCatalog } from './models/model-catalog.js';
import type { GuardedFetchDeps } from './providers/guarded-fetch.js';
import { ProviderRegistry } from './providers/registry.js';
import type { UpstreamConnector } from './providers/upstream-http.js';
import { RequestService } from './requests/request-service.js';
import { SettlementService } from './requests/settlement-service.js';
import { UsageReviewService } from './requests/usage-review-service.js';
import { TaskOperations } from './tasks/task-operations.js';
import { H3Service } from './h3/h3-service.js';
import { TaskService } from './tasks/task-service.js';
import { TaskSettlement } from './tasks/task-settlement.js';
import { TaskStore } from './tasks/task-store.js';
import { TaskWorker, type WorkerOptions } from './tasks/task-worker.js';
import { startSimulator } from './simulator/server.js';
import { openStore, type StoreOptions } from './store/database.js';
import { AccountUsageReader } from './usage/account-usage.js';
import { RequestListing } from './usage/request-listing.js';
import { Statements } from './usage/statement.js';
import { BudgetService } from './budgets/budget-service.js';
import { createIdGenerator, systemClock, type Clock, type IdGenerator } from './util/effects.js';

export interface ServiceOptions {
  readonly config: Config;
  /** `postgres://...`, `sqlite:PATH`, or a plain SQLite path. */
  readonly databaseUrl: string;
  readonly postgresSchema?: string;
  readonly redisUrl?: string | undefined;
  readonly adminToken?: string | undefined;
  /** Protects `/metrics` when set (docs/operations.md). */
  readonly metricsToken?: string | undefined;
  readonly upstreamKeys?: Readonly<Record<string, string>>;
  readonly clock?: Clock;
  readonly ids?: IdGenerator;
  readonly logger?: FastifyBaseLogger;
  /** Collect process metrics (off in tests that build many apps). */
  readonly processMetrics?: boolean;
  /** Where asset bytes live (`<dir>/objects`, `<dir>/tmp`), or are staged for S3. */
  readonly assetsDir: string;
  /** S3 credentials, when `storage.kind` is `s3` (from the environment, never the file). */
  readonly storageSecrets?: StorageSecrets | undefined;
  /** The guarded fetch's network (tests replace it; default: DNS and undici). */
  readonly fetchDeps?: GuardedFetchDeps;
  /** Start upstream pools and the simulator (the CLI's money commands need neither). */
  readonly upstreams?: boolean;
  /** How upstream sockets are opened (tests inject failures; default: undici's connector). */
  readonly upstreamConnector?: UpstreamConnector;
  /** This instance's name in task leases (default: a fresh id). */
  readonly workerName?: string;
  /** Where the built console is (tests build their own; default: packages/console/dist). */
  readonly consoleDir?: string;
  /** Task worker settings (tests: faults, short leases). */
  readonly worker?: Omit<WorkerOptions, 'owner'>;
}

export interface Services extends AppDeps {
  readonly taskStore: TaskStore;
  /** Not started here: `main.ts` starts it; tests tick it or start it. */
  readonly taskWorker: TaskWorker;
  /** Models whose configured prices differ from the store's current version (left unchanged). */
  readonly pricesToSync: readonly PriceWarning[];
  close(): Promise<void>;
}

// Its own module so the CLI can find the database without importing every service.
export { defaultDatabaseUrl } from './config/database-location.js';

/**
 * Wires every service from explicit options (nothing here reads the environment). Starts the
 * built-in simulator when a configured upstream is of kind `simulator`.
 */
export async function createServices(options: ServiceOptions): Promise<Services> {
  const clock = options.clock ?? systemClock;
  const ids = options.ids ?? createIdGenerator(clock);
  const logger = options.logger ?? pino({ level: 'silent' });
  const storeOptions: StoreOptions = {
    url: options.databaseUrl,
    ...(options.postgresSchema === undefined ? {} : { postgresSchema: options.postgresSchema }),
    onConnectionLost: (error) =>
      logger.warn({ err: error }, 'database connection lost; the pool opens a new one'),
  };
  const store = await openStore(storeOptions);
  const closers: (() => Promise<void>)[] = [() => store.close()];
  try {
    const config = options.config;
    const withUpstreams = options.upstreams ?? true;
    const needsSimulator =
      withUpstreams &&
      Object.values(config.upstreams).some((upstream) => upstream.kind === 'simulator');
    const simulator = needsSimulator ? await startSimulator({ logger }) : undefined;
    if (simulator !== undefined) closers.push(() => simulator.close());
    const providers = new ProviderRegistry(
      config,
      options.upstreamKeys ?? {},
      withUpstreams ? (simulator?.url ?? null) : undefined,
      options.upstreamConnector,
    );
    closers.push(() => providers.close());
    const redis =
      options.redisUrl === undefined
        ? undefined
        : new Redis(options.redisUrl, { lazyConnect: false, maxRetriesPerRequest: 2 });
    if (redis !== undefined) closers.push(async () => void (await redis.quit()));
    const effects = { clock, ids, budgetTimeZone: config.budget_time_zone };
    const keys = new KeyService(
      store.db,
      clock,
      ids,
      config.models.map((model) => model.id),
      config.key_cache_ttl_ms,
      (error) => logger.warn({ err: error }, 'last-used update failed'),
      config.budget_time_zone,
    );
    const assets = createAssetStorage(config.storage, options.assetsDir, options.storageSecrets);
    if (assets.close !== undefined) closers.push(async () => assets.close?.());
    const prices = new PriceBook(
      store.db,
      clock,
      config.models,
      config.key_cache_ttl_ms,
      (priceVersion, problem) =>
        logger.error(
          { priceVersion, problem },
          'price version is unreadable; nothing is priced on it',
        ),
    );
    const requests = new RequestService(
      store.db,
      effects,
      config.request_retention_days * 86_400_000,
      logger,
    );
    const pricesToSync = pricesOutOfSync(await prices.seedMissing());
    for (const warning of pricesToSync) logger.warn({ model: warning.model }, warning.message);
    const metrics = new Metrics(options.processMetrics ?? false);
    const catalog = new ModelCatalog(config.models, prices);
    const taskStore = new TaskStore(store.db, store.dialect);
    metrics.countTasks = () => taskStore.countByStatus();
    const taskWorker = new TaskWorker(
      {
        db: store.db,
        tasks: taskStore,
        providers,
        prices,
        storage: assets,
        effects,
        logger,
        metrics,
        maxVideoBytes: config.limits.asset_bytes,
      },
      {
        owner: options.workerName ?? ids.next('worker'),
        leaseMs: config.tasks.lease_ms,
        concurrency: config.tasks.worker_concurrency,
        perAccount: perAccountConcurrency(config.tasks),
        vanishedAfterMs: config.tasks.vanished_after_ms,
        settlementWindowMs: config.tasks.settlement_window_ms,
        ...options.worker,
      },
    );
    closers.push(() => taskWorker.stop());
    const consoleUsers = new ConsoleUsers(store.db, effects);
    const services: Services = {
      config,
      store,
      clock,
      ids,
      logger,
      metrics,
      keys,
      budgets: new BudgetService(store.db, keys, effects),
      accounts: new AccountService(store.db, effects),
      prices,
      catalog,
      requests,
      tasks: new TaskService({
        db: store.db,
        tasks: taskStore,
        requests,
        prices,
        catalog,
        clock,
        ids,
      }),
      h3: new H3Service({
        db: store.db,
        tasks: taskStore,
        requests,
        prices,
        catalog,
        clock,
        ids,
        worker: taskWorker,
      }),
      taskSettlement: new TaskSettlement({
        db: store.db,
        tasks: taskStore,
        requests,
        effects,
      }),
      taskOperations: new TaskOperations({ db: store.db, tasks: taskStore, effects }),
      taskStore,
      taskWorker,
      pricesToSync,
      settlements: new SettlementService(store.db, effects, requests.records, requests),
      usageReviews: new UsageReviewService(store.db, clock, requests.records),
      requestListing: new RequestListing(store.db),
      accountUsage: new AccountUsageReader(store.db),
      statements: new Statements(store.db, clock),
      providers,
      redis,
      adminToken: options.adminToken,
      metricsToken: options.metricsToken,
      assets,
      ...(options.fetchDeps === undefined ? {} : { fetchDeps: options.fetchDeps }),
      consoleUsers,
      consoleSessions: new ConsoleSessions(
        store.db,
        effects,
        consoleUsers,
        new LoginThrottle(redis),
      ),
      ...(options.consoleDir === undefined ? {} : { consoleDir: options.consoleDir }),
      close: async () => {
        for (const close of closers.reverse()) await close();
      },
    };
    return services;
  } catch (error) {
    for (const close of closers.reverse()) await close();
    throw error;
  }
}
