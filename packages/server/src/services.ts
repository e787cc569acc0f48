import type { Redis } from 'ioredis';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { AccountService } from './accounts/account-service.js';
import { AuditLog } from './audit/audit-log.js';
import { createAssetStorage, type StorageSecrets } from './assets/create-storage.js';
import { KeyService } from './auth/key-service.js';
import { PriceBook } from './billing/price-book.js';
import { pricesOutOfSync, type PriceWarning } from './billing/price-warnings.js';
import type { Config } from './config/schema.js';
import { ConfigError } from './config/load.js';
import { perAccountConcurrency } from './config/task-engine-schema.js';
import { ConsoleSessions } from './users/console-sessions.js';
import { ConsoleUsers } from './users/console-users.js';
import { LoginThrottle } from './users/login-throttle.js';
import { ConsoleSignUp } from './users/self-signup.js';
import { ConsoleTotp } from './users/totp.js';
import type { AppDeps } from './http/deps.js';
import { Readiness } from './http/readiness.js';
import { StreamsInFlight } from './http/streams-in-flight.js';
import { Metrics } from './http/metrics.js';
import { ModelCatalog } from './models/model-catalog.js';
import type { GuardedFetchDeps } from './net/guarded-fetch.js';
import { ProviderRegistry } from './providers/registry.js';
import { ChannelRouter } from './routing/channel-router.js';
import type { RandomSource } from './routing/channel-selection.js';
import type { BreakerSettings } from './routing/circuit-breaker.js';
import { DisabledChannels } from './routing/disabled-channels.js';
import type { UpstreamConnector } from './providers/upstream-http.js';
import { unresolvedSummary } from './usage/unresolved-queue.js';
import { RequestService } from './requests/request-service.js';
import { RecordLog } from './requests/record-log.js';
import { SettlementService } from './requests/settlement-service.js';
import { UsageReviewService } from './requests/usage-review-service.js';
import { TaskOperations } from './tasks/task-operations.js';
import { H3Service } from './h3/h3-service.js';
import { TaskService } from './families/media/media-task-service.js';
import { imageFamily } from './families/media/image-family.js';
import { videoFamily } from './families/media/video-family.js';
import { h3Family } from './h3/h3-family.js';
import { TaskFamilies } from './tasks/task-family.js';
import { TaskReads } from './tasks/task-reads.js';
import { TaskSettlement } from './tasks/task-settlement.js';
import { TaskStore } from './tasks/task-store.js';
import { TaskWorker, type WorkerOptions } from './tasks/task-worker.js';
import { startSimulator } from './simulator/server.js';
import { startChangeFeed, type CacheChangeHandlers, type ChangeFeed } from './store/change-feed.js';
import { openStore, type StoreOptions } from './store/database.js';
import { AccountUsageReader } from './usage/account-usage.js';
import { RequestListing } from './usage/request-listing.js';
import { Statements } from './usage/statement.js';
import { BudgetService } from './operator/budget-service.js';
import { agreeOnBudgetTimeZone } from './budgets/budget-time-zone.js';
import { UploadService } from './uploads/upload-service.js';
import { randomBytes } from 'node:crypto';
import { createPaymentService, type StripeSettings } from './payments/create-payments.js';
import { createIdGenerator, systemClock, type Clock, type IdGenerator } from './util/effects.js';

export interface ServiceOptions {
  readonly config: Config;
  /** `postgres://...`, `sqlite:PATH`, or a plain SQLite path. */
  readonly databaseUrl: string;
  readonly postgresSchema?: string;
  /** `refuse`: start only on a database already migrated (store/database.ts; default `apply`). */
  readonly pendingMigrations?: 'apply' | 'refuse';
  readonly redisUrl?: string | undefined;
  readonly adminToken?: string | undefined;
  /** Protects `/metrics` when set (docs/operations.md). */
  readonly metricsToken?: string | undefined;
  readonly upstreamKeys?: Readonly<Record<string, string>>;
  readonly clock?: Clock;
  readonly ids?: IdGenerator;
  /** How channels are picked within a priority (tests: a seeded source; default Math.random). */
  readonly random?: RandomSource;
  /** Channel circuit breakers (tests: small thresholds); default routing/circuit-breaker.ts. */
  readonly breaker?: BreakerSettings;
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
  /**
   * PostgreSQL: listen for cache change notices (default true). A CLI command, over in moments
   * and changing what it reads itself, opens no listening connection.
   */
  readonly listenForChanges?: boolean;
  /** How upstream sockets are opened (tests inject failures; default: undici's connector). */
  readonly upstreamConnector?: UpstreamConnector;
  /** This instance's name in task leases (default: a fresh id). */
  readonly workerName?: string;
  /** Where the built console is (tests build their own; default: packages/console/dist). */
  readonly consoleDir?: string;
  /**
   * The share-link secret (main.ts loads it: shares/share-link-secret.ts). Absent (tests, the
   * CLI): a random one for this process, so links asked for from the console last as long as it.
   */
  readonly shareLinkSecret?: Buffer;
  /** Stripe's secrets: online top-up is enabled with them (docs/payments.md). */
  readonly stripe?: StripeSettings | undefined;
  /** Task worker settings (tests: faults, short leases). */
  readonly worker?: Omit<WorkerOptions, 'owner'>;
  /** Keys the key service remembers at most (tests: a few; default auth/key-service.ts). */
  readonly maxCachedKeys?: number;
}

export interface Services extends AppDeps {
  readonly taskStore: TaskStore;
  /** Not started here: `main.ts` starts it; tests tick it or start it. */
  readonly taskWorker: TaskWorker;
  /** PostgreSQL: the listener of cache change notices (store/change-feed.ts); SQLite: none. */
  readonly changeFeed: ChangeFeed | undefined;
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
    namedStatements: options.config.postgres.named_statements,
    ...(options.pendingMigrations === undefined
      ? {}
      : { pendingMigrations: options.pendingMigrations }),
    onConnectionLost: (error) =>
      logger.warn({ err: error }, 'database connection lost; the pool opens a new one'),
  };
  const store = await openStore(storeOptions);
  const closers: (() => Promise<void>)[] = [() => store.close()];
  try {
    const config = options.config;
    // Before anything counts a budget: one zone for every instance (budgets/budget-time-zone.ts).
    await agreeOnBudgetTimeZone(store.db, config.budget_time_zone, clock);
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
      options.fetchDeps,
    );
    closers.push(() => providers.close());
    const redis = options.redisUrl === undefined ? undefined : await connectRedis(options.redisUrl);
    // Reported where it matters (rate limits fall back, http/plugins/rate-limit.ts); without a
    // listener ioredis would print every failed reconnection to stderr.
    redis?.on('error', () => {});
    // QUIT needs an answer: an unreachable Redis is only disconnected.
    if (redis !== undefined)
      closers.push(async () => {
        if (redis.status === 'ready') await redis.quit();
        else redis.disconnect();
      });
    const eventLog = config.accounting.event_log;
    if (eventLog && store.dialect === 'postgres' && config.postgres.batch_money)
      throw new ConfigError(
        'accounting.event_log needs postgres.batch_money: false (the batched money paths do not write the event log yet)',
      );
    const effects = {
      clock,
      ids,
      budgetTimeZone: config.budget_time_zone,
      moneyEvents: eventLog,
    };
    const assets = await createAssetStorage(
      config.storage,
      options.assetsDir,
      options.storageSecrets,
    );
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
    const recordLog = eventLog
      ? new RecordLog(store.db, store.dialect, effects, logger)
      : undefined;
    if (recordLog !== undefined) {
      recordLog.start();
      closers.push(() => recordLog.stop());
    }
    const requests = new RequestService(
      store.db,
      effects,
      config.request_retention_days * 86_400_000,
      logger,
      store.dialect === 'postgres' && config.postgres.batch_money,
      recordLog,
    );
    const pricesToSync = pricesOutOfSync(await prices.seedMissing());
    for (const warning of pricesToSync) logger.warn({ model: warning.model }, warning.message);
    const metrics = new Metrics(options.processMetrics ?? false);
    const catalog = new ModelCatalog(config.models, prices);
    const channels = new ChannelRouter(config, {
      clock,
      random: options.random ?? Math.random,
      disabled: new DisabledChannels(store.db, clock),
      ...(options.breaker === undefined ? {} : { breaker: options.breaker }),
      onAttempt: (attempt) =>
        metrics.channelAttempts.inc({ channel: attempt.channel, outcome: attempt.outcome }),
    });
    metrics.channelStates = () => channels.list();
    const taskStore = new TaskStore(store.db, store.dialect);
    metrics.countTasks = () => taskStore.countByStatus();
    metrics.readUnresolved = () => unresolvedSummary(store.db, clock.now());
    if (recordLog !== undefined) metrics.readEventLog = () => recordLog.backlog();
    // Every task family of this instance: the kernel (tasks/) knows them only through this.
    const taskFamilies = new TaskFamilies([imageFamily, videoFamily, h3Family]);
    const taskReads = new TaskReads({ db: store.db, tasks: taskStore, families: taskFamilies });
    const taskWorker = new TaskWorker(
      {
        db: store.db,
        tasks: taskStore,
        providers,
        families: taskFamilies,
        prices,
        storage: assets,
        effects,
        logger,
        metrics,
        maxVideoBytes: config.limits.asset_bytes,
        channels,
      },
      {
        owner: options.workerName ?? ids.next('worker'),
        leaseMs: config.tasks.lease_ms,
        concurrency: config.tasks.worker_concurrency,
        perAccount: perAccountConcurrency(config.tasks),
        vanishedAfterMs: config.tasks.vanished_after_ms,
        settlementWindowMs: config.tasks.settlement_window_ms,
        // A graceful shutdown gives steps in flight the same grace as requests in flight.
        stopGraceMs: config.server.shutdown_grace_ms,
        ...options.worker,
      },
    );
    closers.push(() => taskWorker.stop());
    const consoleUsers = new ConsoleUsers(store.db, effects, {
      ignorePlusTags: config.server.console_email_ignore_plus_tags,
    });
    const keys = new KeyService(
      store.db,
      clock,
      ids,
      config.models.map((model) => model.id),
      config.key_cache_ttl_ms,
      (error) => logger.warn({ err: error }, 'last-used update failed'),
      config.budget_time_zone,
      options.maxCachedKeys,
    );
    const changeFeed =
      store.dialect === 'postgres' && (options.listenForChanges ?? true)
        ? await startChangeFeed({
            url: options.databaseUrl,
            schema: options.postgresSchema,
            logger,
            handlers: cacheChangeHandlers(keys, prices),
          })
        : undefined;
    if (changeFeed !== undefined) closers.push(() => changeFeed.close());
    const loginThrottle = new LoginThrottle(redis);
    const consoleTotp = new ConsoleTotp(
      store.db,
      clock,
      loginThrottle,
      config.server.console_require_operator_totp,
    );
    const accounts = new AccountService(store.db, effects);
    const consoleSessions = new ConsoleSessions(
      store.db,
      effects,
      consoleUsers,
      loginThrottle,
      consoleTotp,
    );
    const audit = new AuditLog(store.db, effects);
    const services: Services = {
      config,
      store,
      clock,
      ids,
      logger,
      metrics,
      keys,
      changeFeed,
      budgets: new BudgetService(store.db, keys, effects),
      accounts,
      audit,
      payments: await createPaymentService({
        db: store.db,
        accounts,
        audit,
        effects,
        logger,
        stripe: options.stripe,
        maxOpenOrdersPerAccount: options.config.limits.open_topups_per_account,
      }),
      prices,
      catalog,
      requests,
      tasks: new TaskService({
        db: store.db,
        tasks: taskStore,
        reads: taskReads,
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
        families: taskFamilies,
        requests,
        effects,
      }),
      taskOperations: new TaskOperations({
        db: store.db,
        tasks: taskStore,
        families: taskFamilies,
        effects,
      }),
      taskFamilies,
      taskReads,
      taskStore,
      taskWorker,
      pricesToSync,
      settlements: new SettlementService(
        store.db,
        effects,
        requests.records,
        requests,
        (kind, id) => taskFamilies.of(kind).path(id),
      ),
      usageReviews: new UsageReviewService(store.db, clock, requests.records),
      requestListing: new RequestListing(store.db),
      accountUsage: new AccountUsageReader(store.db),
      statements: new Statements(store.db, clock),
      providers,
      channels,
      redis,
      adminToken: options.adminToken,
      metricsToken: options.metricsToken,
      assets,
      uploads: new UploadService({ config, store, clock, ids, requests }, assets),
      shareLinkSecret: options.shareLinkSecret ?? randomBytes(32),
      ...(options.fetchDeps === undefined ? {} : { fetchDeps: options.fetchDeps }),
      consoleUsers,
      readiness: new Readiness(),
      streamsInFlight: new StreamsInFlight(),
      consoleSessions,
      consoleTotp,
      consoleSignUp: new ConsoleSignUp({
        db: store.db,
        effects,
        accounts,
        users: consoleUsers,
        sessions: consoleSessions,
        throttle: loginThrottle,
        enabled: config.server.console_self_signup,
      }),
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

/**
 * What a change notice makes each cache forget: a key by its hash, a model's current price; a
 * resync (listening again after a loss) forgets both whole.
 */
function cacheChangeHandlers(keys: KeyService, prices: PriceBook): CacheChangeHandlers {
  return {
    onChange: (table, key) => {
      if (table === 'api_keys') keys.forget(key);
      else if (table === 'model_prices') prices.forget(key);
    },
    onResync: () => {
      keys.forgetAll();
      prices.forgetAll();
    },
  };
}

/**
 * The Redis client for shared rate limits, loaded only when Redis is configured: a gateway
 * without it never pays for importing the client (memory at rest: bench/RESULTS.md).
 */
async function connectRedis(url: string): Promise<Redis> {
  const { Redis: RedisClient } = await import('ioredis');
  return new RedisClient(url, { lazyConnect: false, maxRetriesPerRequest: 2 });
}
