import path from 'node:path';
import { buildApp } from './http/app.js';
import { ConfigError, loadSettings } from './config/load.js';
import { createLogger } from './logger.js';
import { startSweeper } from './maintenance/sweeper.js';
import { createServices, defaultDatabaseUrl } from './services.js';

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
  const sweeper = startSweeper(services, { config: settings.config, logger });
  services.taskWorker.start();

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
    sweeper.stop();
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
