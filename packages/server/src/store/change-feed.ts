import type { FastifyBaseLogger } from 'fastify';
import type pg from 'pg';

/** The channel the database's triggers notify on (migration 023). */
export const CACHE_CHANGE_CHANNEL = 'tollgate_cache';

export interface CacheChangeHandlers {
  /** A row changed in `table` of this instance's schema: `key` is the key's hash or the model. */
  readonly onChange: (table: string, key: string) => void;
  /**
   * Notices may have been missed (listening started, or started again after a lost
   * connection): everything cached must be read again.
   */
  readonly onResync: () => void;
}

export interface ChangeFeedOptions {
  readonly url: string;
  /** The schema the instance's tables are in (`search_path`), as `openStore` was given it. */
  readonly schema?: string | undefined;
  readonly handlers: CacheChangeHandlers;
  readonly logger: FastifyBaseLogger;
  /** First wait before connecting again after a loss; doubled up to `maxReconnectDelayMs`. */
  readonly reconnectDelayMs?: number;
  readonly maxReconnectDelayMs?: number;
  /**
   * How often the listening connection is asked `select 1`: a connection that died without a
   * word (a silent network loss) is found within this and replaced.
   */
  readonly heartbeatMs?: number;
}

export interface ChangeFeed {
  /** Whether a connection is listening now (when not, the caches' TTL is the only bound). */
  readonly listening: () => boolean;
  /** The listening session's `pg_stat_activity.pid`, for an operator's diagnosis (or a test's fault). */
  readonly backendPid: () => number | undefined;
  close(): Promise<void>;
}

const CONNECT_TIMEOUT_MS = 5_000;

/**
 * PostgreSQL only: one dedicated connection (outside the pool, whose connections come and go)
 * runs `LISTEN tollgate_cache` and hands each notice for this instance's schema to `onChange`.
 * A lost connection (server restart, failover, `pg_terminate_backend`, a heartbeat that fails)
 * is replaced after a short backoff; every successful (re)start calls `onResync`, because the
 * notices sent while nobody listened are gone. Never throws: until a connection listens, the
 * caches' TTL bounds how stale they can be. Resolves after the first attempt.
 */
export async function startChangeFeed(options: ChangeFeedOptions): Promise<ChangeFeed> {
  const { default: pgModule } = await import('pg');
  const baseDelay = options.reconnectDelayMs ?? 100;
  const maxDelay = options.maxReconnectDelayMs ?? 5_000;
  let current: pg.Client | undefined;
  let ownSchema: string | undefined;
  let closed = false;
  let failures = 0;
  let reconnect: NodeJS.Timeout | undefined;
  const lostClients = new WeakSet<pg.Client>();

  const deliver = (payload: string | undefined) => {
    const notice = parseNotice(payload);
    if (notice === undefined || notice.schema !== ownSchema) return;
    options.handlers.onChange(notice.table, notice.key);
  };

  const lose = (client: pg.Client, error?: Error) => {
    if (lostClients.has(client)) return;
    lostClients.add(client);
    client.end().catch(() => undefined);
    if (current === client) current = undefined;
    if (closed) return;
    const wait = Math.min(maxDelay, baseDelay * 2 ** failures);
    failures += 1;
    options.logger.warn(
      { err: error, retryInMs: wait },
      'cache change listener lost its database connection; caches fall back to their TTL until it listens again',
    );
    reconnect = setTimeout(() => void connect(), wait);
    reconnect.unref();
  };

  const connect = async () => {
    if (closed) return;
    const client = new pgModule.Client({
      connectionString: options.url,
      application_name: 'tollgate-listener',
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
      ...(options.schema === undefined ? {} : { options: `-c search_path=${options.schema}` }),
    });
    client.on('error', (error) => lose(client, error));
    client.on('end', () => lose(client));
    client.on('notification', (message) => {
      if (message.channel === CACHE_CHANGE_CHANNEL) deliver(message.payload);
    });
    try {
      await client.connect();
      const found = await client.query<{ schema: string | null }>(
        'select current_schema() as schema',
      );
      ownSchema = found.rows[0]?.schema ?? undefined;
      await client.query(`listen ${CACHE_CHANGE_CHANNEL}`);
    } catch (error) {
      lose(client, error as Error);
      return;
    }
    if (closed || lostClients.has(client)) {
      lostClients.add(client);
      await client.end().catch(() => undefined);
      return;
    }
    current = client;
    if (failures > 0) options.logger.info('cache change listener is listening again');
    failures = 0;
    options.handlers.onResync();
  };

  const heartbeat = setInterval(() => {
    const client = current;
    if (client === undefined) return;
    client.query('select 1').catch((error: unknown) => lose(client, error as Error));
  }, options.heartbeatMs ?? 10_000);
  heartbeat.unref();

  await connect();
  return {
    listening: () => current !== undefined,
    backendPid: () => (current as { processID?: number } | undefined)?.processID,
    close: async () => {
      closed = true;
      clearInterval(heartbeat);
      clearTimeout(reconnect);
      const client = current;
      current = undefined;
      if (client !== undefined) {
        lostClients.add(client);
        await client.end().catch(() => undefined);
      }
    },
  };
}

function parseNotice(
  payload: string | undefined,
): { schema: string; table: string; key: string } | undefined {
  if (payload === undefined) return undefined;
  try {
    const value = JSON.parse(payload) as Record<string, unknown>;
    const { schema, table, key } = value;
    return typeof schema === 'string' && typeof table === 'string' && typeof key === 'string'
      ? { schema, table, key }
      : undefined;
  } catch {
    return undefined;
  }
}
