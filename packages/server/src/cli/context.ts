import path from 'node:path';
import type { AccountService } from '../accounts/account-service.js';
import type { Settings } from '../config/load.js';
import type { Services } from '../services.js';
import type { Store } from '../store/database.js';
import type { LedgerEffects } from '../billing/journal.js';

/**
 * What a CLI command may need, each opened on first use: the settings, the database alone, or
 * every service. A command that reads one table opens the database only; wiring every service
 * (and importing the server's modules for it) is what made each call cost seconds, so only the
 * commands that use more than the database pay for it.
 */
export class CliContext {
  private loaded: Settings | undefined;
  private opened: Promise<Store> | undefined;
  private wired: Promise<Services> | undefined;

  constructor(private readonly env: NodeJS.ProcessEnv) {}

  async settings(): Promise<Settings> {
    if (this.loaded === undefined) {
      const { loadSettings } = await import('../config/load.js');
      this.loaded = loadSettings(this.env);
    }
    return this.loaded;
  }

  /**
   * The database without any service. Pending migrations are applied or refused as the gateway
   * would at start (`Settings.migrateOnStart`), unless `applyPending` (`tollgate migrate`).
   */
  async store(applyPending = false): Promise<Store> {
    if (this.wired !== undefined) return (await this.wired).store;
    this.opened ??= (async () => {
      const settings = await this.settings();
      const [{ openStore }, { defaultDatabaseUrl }] = await Promise.all([
        import('../store/database.js'),
        import('../config/database-location.js'),
      ]);
      // A command is over in moments: no WAL checkpoint thread (SQLite's autocheckpoint does).
      return openStore({
        url: settings.databaseUrl ?? defaultDatabaseUrl(settings.dataDir),
        checkpointWorker: false,
        namedStatements: settings.config.postgres.named_statements,
        pendingMigrations: applyPending || settings.migrateOnStart ? 'apply' : 'refuse',
      });
    })();
    return this.opened;
  }

  /**
   * The effects of a command that reads or counts budgets, once the configured
   * `budget_time_zone` is known to be the deployment's (budgets/budget-time-zone.ts), as a
   * gateway checks at start.
   */
  async effects(): Promise<LedgerEffects> {
    const [{ createIdGenerator, systemClock }, { agreeOnBudgetTimeZone }, settings, store] =
      await Promise.all([
        import('../util/effects.js'),
        import('../budgets/budget-time-zone.js'),
        this.settings(),
        this.store(),
      ]);
    await agreeOnBudgetTimeZone(store.db, settings.config.budget_time_zone, systemClock);
    return {
      clock: systemClock,
      ids: createIdGenerator(systemClock),
      budgetTimeZone: settings.config.budget_time_zone,
    };
  }

  /** The account service on the database alone (accounts, top-ups, codes). */
  async accounts(): Promise<AccountService> {
    const [{ AccountService }, store, effects] = await Promise.all([
      import('../accounts/account-service.js'),
      this.store(),
      this.effects(),
    ]);
    return new AccountService(store.db, effects);
  }

  /** Every service, as the server wires them, minus upstream pools and the simulator. */
  async services(): Promise<Services> {
    if (this.opened !== undefined)
      throw new Error('CliContext: services() after store(); a command uses one or the other');
    this.wired ??= (async () => {
      const settings = await this.settings();
      const { createServices, defaultDatabaseUrl } = await import('../services.js');
      return createServices({
        config: settings.config,
        databaseUrl: settings.databaseUrl ?? defaultDatabaseUrl(settings.dataDir),
        pendingMigrations: settings.migrateOnStart ? 'apply' : 'refuse',
        assetsDir: path.join(settings.dataDir, 'assets'),
        storageSecrets: settings.storageSecrets,
        upstreams: false,
        listenForChanges: false,
      });
    })();
    return this.wired;
  }

  /** Closes what was opened; one that failed to open has nothing to close (its error is out). */
  async close(): Promise<void> {
    const opened = this.wired ?? this.opened;
    if (opened !== undefined)
      await opened.then(
        (open) => open.close(),
        () => undefined,
      );
  }
}
