import type {
  CompiledQuery,
  DatabaseConnection,
  Dialect,
  Driver,
  QueryResult,
  TransactionSettings,
} from 'kysely';

/**
 * What is known of the writes of a statement or transaction that failed because the database
 * could not be used (a lost connection, a server shutting down, SQLite busy or failing I/O):
 * `no`, certainly nothing of it was committed; `unknown`, the connection was lost while its
 * COMMIT (or an autocommit write) was on its way, so it may have committed.
 */
export type Committed = 'no' | 'unknown';

/** The errors the driver below classified (`pg`'s error objects are not ours to subclass). */
const classified = new WeakMap<object, Committed>();

/**
 * PostgreSQL SQLSTATEs of a database that cannot be used right now: class 08 (connection
 * exception), 57P01-57P03 (terminated by an administrator or a crash, not accepting
 * connections yet), 53300 (too many connections).
 */
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[123]|53300)$/;
/** Socket failures reaching or talking to the server. */
const SOCKET_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
/** `pg`'s and pg-pool's own words for a connection that died or could not be opened. */
const LOST_MESSAGE =
  /^(Connection terminated|Client has encountered a connection error|Client was closed|timeout exceeded when trying to connect)/;
/**
 * SQLite result codes of a database that cannot be written right now (locked past
 * `busy_timeout`, failing I/O, a full disk). SQLite's statements and COMMITs are local and
 * atomic: one that fails with these committed nothing (store/sqlite-group-commit.ts).
 */
const SQLITE_UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN)/;

/**
 * Whether `error` says the database could not be used, and what was committed: an error the
 * PostgreSQL driver classified (`classifyingOutages`), or one of SQLite's. `undefined`: another
 * error (a constraint, a bug), which is not this module's to explain. Follows `cause`.
 */
export function databaseOutageOf(error: unknown): Committed | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth += 1) {
    const known = classified.get(current);
    if (known !== undefined) return known;
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && SQLITE_UNAVAILABLE.test(code)) return 'no';
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Whether a PostgreSQL client error means the connection, or the server, is not usable. */
export function isConnectionLoss(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (UNAVAILABLE_SQLSTATE.test(code) || SOCKET_CODES.has(code)))
    return true;
  return typeof message === 'string' && LOST_MESSAGE.test(message);
}

/** An error the server itself answered (a severity with it): the statement did not commit. */
function answeredByServer(error: unknown): boolean {
  return typeof (error as { severity?: unknown }).severity === 'string';
}

function classify(error: unknown, committed: Committed): void {
  if (typeof error !== 'object' || error === null || !isConnectionLoss(error)) return;
  // The less certain word wins: an error seen again while committing stays `unknown`.
  if (classified.get(error) !== 'unknown') classified.set(error, committed);
}

/**
 * A PostgreSQL dialect whose driver says, on each error of a lost connection, what was
 * committed (`databaseOutageOf`), so that the answer can tell the caller to send the request
 * again (nothing committed) or to read its record first (a COMMIT whose outcome is unknown):
 * errors/database-outage.ts. The error objects themselves are passed on unchanged, so code that
 * reads their SQLSTATE (requests/one-statement.ts) sees what it always saw.
 *
 * - acquiring a connection, BEGIN, any statement inside a transaction: nothing committed (the
 *   server rolls back the open transaction of a session that died);
 * - COMMIT: unknown (the commit may have been written before the answer was lost);
 * - a statement outside a transaction: nothing committed when the server answered the error,
 *   or when it only reads; otherwise unknown;
 * - ROLLBACK on a dead connection: not an error of its own (the server rolls back anyway), so
 *   the error that led to it is the one the caller hears.
 */
export function classifyingOutages(dialect: Dialect): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createDriver: () => new OutageClassifyingDriver(dialect.createDriver()),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createQueryCompiler: () => dialect.createQueryCompiler(),
  };
}

class OutageClassifyingDriver implements Driver {
  /** One wrapper per connection of the pool, reused on every checkout. */
  readonly #wrappers = new WeakMap<DatabaseConnection, ClassifyingConnection>();

  constructor(private readonly inner: Driver) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    let connection: DatabaseConnection;
    try {
      connection = await this.inner.acquireConnection();
    } catch (error) {
      classify(error, 'no');
      throw error;
    }
    let wrapper = this.#wrappers.get(connection);
    if (wrapper === undefined) {
      wrapper = new ClassifyingConnection(connection);
      this.#wrappers.set(connection, wrapper);
    }
    return wrapper;
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings) {
    const wrapper = connection as ClassifyingConnection;
    try {
      await this.inner.beginTransaction(wrapper.inner, settings);
    } catch (error) {
      classify(error, 'no');
      throw error;
    }
    wrapper.inTransaction = true;
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const wrapper = connection as ClassifyingConnection;
    try {
      await this.inner.commitTransaction(wrapper.inner);
    } catch (error) {
      classify(error, 'unknown');
      throw error;
    } finally {
      wrapper.inTransaction = false;
    }
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const wrapper = connection as ClassifyingConnection;
    try {
      await this.inner.rollbackTransaction(wrapper.inner);
    } catch (error) {
      if (!isConnectionLoss(error)) throw error;
    } finally {
      wrapper.inTransaction = false;
    }
  }

  async savepoint(
    connection: DatabaseConnection,
    name: string,
    compile: Parameters<NonNullable<Driver['savepoint']>>[2],
  ): Promise<void> {
    await this.inner.savepoint?.((connection as ClassifyingConnection).inner, name, compile);
  }

  async rollbackToSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: Parameters<NonNullable<Driver['rollbackToSavepoint']>>[2],
  ): Promise<void> {
    await this.inner.rollbackToSavepoint?.(
      (connection as ClassifyingConnection).inner,
      name,
      compile,
    );
  }

  async releaseSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: Parameters<NonNullable<Driver['releaseSavepoint']>>[2],
  ): Promise<void> {
    await this.inner.releaseSavepoint?.((connection as ClassifyingConnection).inner, name, compile);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection((connection as ClassifyingConnection).inner);
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

const READ_ONLY = /^\s*select\b/i;

class ClassifyingConnection implements DatabaseConnection {
  inTransaction = false;

  constructor(readonly inner: DatabaseConnection) {}

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    try {
      return await this.inner.executeQuery<R>(compiledQuery);
    } catch (error) {
      classify(
        error,
        this.inTransaction || answeredByServer(error) || READ_ONLY.test(compiledQuery.sql)
          ? 'no'
          : 'unknown',
      );
      throw error;
    }
  }

  streamQuery<R>(compiledQuery: CompiledQuery, chunkSize?: number) {
    return this.inner.streamQuery<R>(compiledQuery, chunkSize);
  }
}
