import path from 'node:path';
import { reclaimUnusedObjects } from './assets/asset-objects.js';
import { buildApp } from './http/app.js';
import { ConfigError, loadSettings } from './config/load.js';
import { createLogger } from './logger.js';
import { createServices, defaultDatabaseUrl } from './services.js';

/** How often stale work is swept, and how old a `processing` record must be to count as stale. */
const SWEEP_INTERVAL_MS = 60_000;

/** The gateway process: read settings once, wire services, listen, shut down gracefully. */
export async function serve(env: NodeJS.ProcessEnv): Promise<void> {
  const logger = createLogger(env['LOG_LEVEL'] ?? 'info');
  const settings = loadSettings(env);
  const services = await createServices({
    config: settings.config,
    databaseUrl: settings.databaseUrl ?? defaultDatabaseUrl(settings.dataDir),
    redisUrl: settings.redisUrl,
    assetsDir: path.join(settings.dataDir, 'assets'),
    storageSecrets: settings.storageSecrets,
    adminToken: settings.adminToken,
    upstreamKeys: settings.upstreamKeys,
    logger,
    processMetrics: true,
  });
  const app = await buildApp(services);
  const staleAfterMs =
    Math.max(
      ...Object.values(settings.config.upstreams).map(
        (upstream) =>
          upstream.timeouts.connect_ms +
          upstream.timeouts.first_byte_ms +
          upstream.timeouts.idle_ms,
      ),
    ) * 2;
  let sweeping = false;
  const sweep = setInterval(() => {
    // One sweep at a time: a slow storage must not pile sweeps up.
    if (sweeping) return;
    sweeping = true;
    const now = services.clock.now();
    Promise.all([
      services.requests.markStaleAsUnknown(now - staleAfterMs),
      services.requests.records.purgeExpired(now),
      reclaimUnusedObjects(services.store.db, services.assets, { now }),
    ])
      .then(([stale, purged, objects]) => {
        if (stale > 0 || purged > 0 || objects.reclaimed > 0)
          logger.info({ stale, purged, reclaimedObjects: objects.reclaimed }, 'swept');
      })
      .catch((error: unknown) => logger.error({ err: error }, 'sweep failed'))
      .finally(() => (sweeping = false));
  }, SWEEP_INTERVAL_MS);
  sweep.unref();

  await app.listen({ port: settings.port, host: settings.host });
  logger.info(
    {
      url: `http://${settings.host}:${settings.port}/v1`,
      database: services.store.dialect,
      config: settings.configSource,
      admin: settings.adminToken !== undefined,
    },
    'tollgate listening',
  );
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    clearInterval(sweep);
    app
      .close()
      .then(() => services.close())
      .then(() => process.exit(0))
      .catch((error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

// Run when executed directly (npm start), not when imported by the CLI.
if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  serve(process.env).catch((error: unknown) => {
    console.error(error instanceof ConfigError ? error.message : error);
    process.exit(1);
  });
}
