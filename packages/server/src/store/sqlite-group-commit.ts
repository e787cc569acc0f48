import {
  CompiledQuery,
  SqliteDialect,
  type DatabaseConnection,
  type Driver,
  type Kysely,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import { setImmediate as deferred } from 'node:timers';
import type { SqliteDatabase } from './sqlite-binding.js';

/**
 * A Kysely driver for one SQLite connection that commits many transactions at once ("group
 * commit"). SQLite serialises writers anyway; what costs is each COMMIT (the WAL frames of every
 * page the transaction touched, written per commit: ~60 µs of the ~800 µs CPU an accounted
 * request costs here, twice per request). See docs/architecture.md, "Group commit".
 *
 * How it works:
 *
 * - The connection is lent to one user at a time, first come first served (a FIFO lock).
 * - A Kysely transaction runs as `SAVEPOINT` inside a shared outer transaction (`BEGIN
 *   IMMEDIATE`, opened by the first user that needs one). Its own rollback is `ROLLBACK TO`, which
 *   undoes exactly its writes, as a transaction of its own would, and answers at once.
 * - On commit its savepoint is released and the connection is handed to the next user at once,
 *   but the caller's `commit` does not return until the outer transaction has committed. The
 *   outer COMMIT is run at the end of the current event-loop turn (`setImmediate`), then queues
 *   for the connection like any user: every request whose I/O arrived in the same turn has run
 *   its transactions by then, and one COMMIT covers them all. Without load that is one
 *   transaction per COMMIT, a few microseconds later than before.
 * - A statement outside a transaction runs on its own (autocommit) when no outer transaction is
 *   open. When one is open it runs inside it, and its caller also waits for that commit: nobody
 *   is answered with data that is not committed.
 * - If the outer COMMIT fails, or SQLite rolls the outer transaction back by itself, every caller
 *   waiting on it gets the error; none of their writes persist, as if each commit had failed.
 *
 * The contract Kysely sees is unchanged: when `transaction().execute()` resolves, the
 * transaction is committed; when it rejects, nothing of it persists.
 */
export class GroupCommitSqliteDriver implements Driver {
  readonly #database: SqliteDatabase;
  readonly #queue: (() => void)[] = [];
  #locked = false;
  /** Bumped whenever an outer transaction opens; a lease remembers the one it worked in. */
  #generation = 0;
  #outerOpen = false;
  #waiters: { resolve: () => void; reject: (error: unknown) => void }[] = [];
  #commitQueued = false;

  constructor(database: SqliteDatabase) {
    this.#database = database;
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.#lock();
    return new Lease(this);
  }

  async beginTransaction(connection: DatabaseConnection, _settings: TransactionSettings) {
    const lease = asLease(connection);
    this.#openOuter();
    this.run(lease, 'savepoint tollgate_tx');
    lease.inSavepoint = true;
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const lease = asLease(connection);
    this.run(lease, 'release tollgate_tx');
    lease.inSavepoint = false;
    const committed = this.#commitOf(lease);
    this.#detach(lease);
    await committed;
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const lease = asLease(connection);
    if (!lease.inSavepoint) return;
    lease.inSavepoint = false;
    // Nothing of it will persist, so its caller need not wait for the group's commit.
    lease.touchedOuter = false;
    // If SQLite already rolled the outer transaction back (or it was replaced), the savepoint
    // is gone with everything in it: nothing left to undo.
    if (this.#outerOpen && lease.generation === this.#generation) {
      this.run(lease, 'rollback to tollgate_tx');
      this.run(lease, 'release tollgate_tx');
    }
    // Until Kysely releases the connection, a statement still sent on this transaction (a branch
    // of a `Promise.all` whose other branch failed) must not run in the shared transaction.
    lease.rolledBack = true;
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const lease = asLease(connection);
    if (!lease.attached) return;
    // A plain statement that failed changed nothing: its caller hears its own error at once.
    const committed = lease.touchedOuter && !lease.failed ? this.#commitOf(lease) : undefined;
    this.#detach(lease);
    await committed;
  }

  async destroy(): Promise<void> {
    await this.#lock();
    if (this.#outerOpen) this.#commitOuter();
    this.#database.close();
  }

  /** Runs one statement for a lease; called by the lease and by the transaction methods. */
  run(lease: Lease, sql: string, parameters: readonly unknown[] = []): QueryResult<unknown> {
    if (!lease.attached) throw new Error('SQLite connection used after it was released');
    if (lease.rolledBack) throw new Error('this transaction was rolled back; it cannot continue');
    // A transaction whose outer transaction SQLite rolled back must not go on in autocommit.
    if (lease.inSavepoint && (!this.#outerOpen || lease.generation !== this.#generation))
      throw new Error('this transaction was rolled back with its group; it cannot continue');
    if (this.#outerOpen) {
      lease.touchedOuter = true;
      lease.generation = this.#generation;
    }
    try {
      const statement = this.#database.prepare(sql);
      if (statement.reader) return { rows: statement.all(parameters) };
      const { changes, lastInsertRowid } = statement.run(parameters);
      return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
    } catch (error) {
      lease.failed = true;
      // Some errors (disk full, I/O) make SQLite roll back the whole transaction: then every
      // write waiting for the outer commit is lost, and its caller must hear so.
      if (this.#outerOpen && !this.#database.inTransaction) this.#failOuter(error);
      throw error;
    }
  }

  #openOuter(): void {
    if (this.#outerOpen) return;
    this.#database.prepare('begin immediate').run();
    this.#outerOpen = true;
    this.#generation += 1;
  }

  /** A promise for the commit of the outer transaction the lease worked in. */
  #commitOf(lease: Lease): Promise<void> {
    // Callers only ask for leases that worked inside an outer transaction; if that transaction is
    // gone, it was rolled back with everything in it.
    if (!this.#outerOpen || lease.generation !== this.#generation)
      return Promise.reject(new Error('the group commit this work belonged to failed'));
    const committed = new Promise<void>((resolve, reject) => {
      this.#waiters.push({ resolve, reject });
    });
    if (!this.#commitQueued) {
      this.#commitQueued = true;
      // After the rest of this event-loop turn: every request whose I/O arrived in the same
      // turn runs its transaction first, and they all share the COMMIT.
      deferred(() => {
        void this.#lock().then(() => {
          this.#commitQueued = false;
          try {
            if (this.#outerOpen) this.#commitOuter();
          } finally {
            this.#unlock();
          }
        });
      });
    }
    return committed;
  }

  #commitOuter(): void {
    try {
      this.#database.prepare('commit').run();
    } catch (error) {
      try {
        if (this.#database.inTransaction) this.#database.prepare('rollback').run();
      } catch {
        // The connection is broken beyond a rollback; the callers still hear the COMMIT error.
      }
      this.#failOuter(error);
      return;
    }
    const waiters = this.#waiters;
    this.#waiters = [];
    this.#outerOpen = false;
    for (const waiter of waiters) waiter.resolve();
  }

  #failOuter(error: unknown): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    this.#outerOpen = false;
    for (const waiter of waiters) waiter.reject(error);
  }

  #detach(lease: Lease): void {
    lease.attached = false;
    this.#unlock();
  }

  #lock(): Promise<void> {
    if (!this.#locked) {
      this.#locked = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#queue.push(resolve));
  }

  #unlock(): void {
    const next = this.#queue.shift();
    if (next === undefined) this.#locked = false;
    else next();
  }
}

/** One user's turn with the connection. */
class Lease implements DatabaseConnection {
  attached = true;
  inSavepoint = false;
  /** Whether anything this lease ran was inside an outer transaction. */
  touchedOuter = false;
  /** Whether a statement of this lease failed. */
  failed = false;
  /** Whether its transaction rolled back: no statement may run on it any more. */
  rolledBack = false;
  generation = -1;

  constructor(private readonly driver: GroupCommitSqliteDriver) {}

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    return this.driver.run(this, compiledQuery.sql, compiledQuery.parameters) as QueryResult<R>;
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming queries are not supported on SQLite here');
  }
}

/** Per Kysely transaction: its lease when it runs on this driver without plugins, else null. */
const transactionLeases = new WeakMap<object, Lease | null>();

/**
 * The connection a Kysely transaction holds when it is a lease of this driver, for running a
 * prepared statement on it directly (store/prepared-query.ts); `null` for any other executor (not
 * a transaction, PostgreSQL, plugins to apply). Kysely's own path builds an executor and a chain of
 * promises per statement, which costs more than SQLite takes to run a hot statement
 * (bench/RESULTS.md). Safe to skip because a lease guards itself: it refuses any statement once
 * its transaction has committed or rolled back (`run`), which is what Kysely's executor asserts,
 * and its statements run to completion one at a time (synchronously), which is what Kysely's
 * per-transaction queue ensures. Found once per transaction (through Kysely, so its checks
 * apply), then remembered.
 */
export function leaseOfTransaction<Tables>(
  executor: Kysely<Tables>,
): DatabaseConnection | null | Promise<DatabaseConnection | null> {
  if (!executor.isTransaction) return null;
  const known = transactionLeases.get(executor);
  if (known !== undefined) return known;
  const queries = executor.getExecutor();
  if (queries.plugins.length > 0) return null;
  return queries.provideConnection(async (connection) => {
    const lease = connection instanceof Lease ? connection : null;
    transactionLeases.set(executor, lease);
    return lease;
  });
}

function asLease(connection: DatabaseConnection): Lease {
  if (!(connection instanceof Lease)) throw new Error('not a connection of this driver');
  return connection;
}

/**
 * SQLite through the group-commit driver. Its outer transactions start with BEGIN IMMEDIATE, so
 * a transaction that reads and then writes never fails with SQLITE_BUSY on upgrade when another
 * process (the CLI) writes at the same time.
 */
export class GroupCommitSqliteDialect extends SqliteDialect {
  readonly #database: SqliteDatabase;

  constructor(database: SqliteDatabase) {
    super({ database });
    this.#database = database;
  }

  override createDriver(): Driver {
    return new GroupCommitSqliteDriver(this.#database);
  }
}
