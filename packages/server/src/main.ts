import { realpathSync } from 'node:fs';
import type { Server } from 'node:http';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { inspect } from 'node:util';
import { buildApp } from './http/app.js';
import { loadSettings } from './config/load.js';
import { createLogger, humanLogLines } from './logger.js';
import { startSweeper } from './maintenance/sweeper.js';
import { createServices, defaultDatabaseUrl } from './services.js';
import { databaseTarget } from './startup/database-target.js';
import { shutDownGracefully } from './startup/graceful-shutdown.js';
import { sharedStateWarnings } from './startup/shared-state-warnings.js';
import { loadShareLinkSecret } from './shares/share-link-secret.js';
import { parseLogOptions } from './startup/log-options.js';
import {
  explainListenError,
  explainServicesError,
  StartupError,
  startupFailureMessage,
} from './startup/startup-errors.js';
import { describeStartup, startupFacts } from './startup/startup-summary.js';

/**
 * The gateway process: read settings once, wire services, listen, shut down gracefully. A
 * start-up failure an operator can fix (configuration, database, port) is thrown as a
 * `ConfigError` or `StartupError` whose message says what is wrong and how to fix it.
 */
export async function serve(env: NodeJS.ProcessEnv): Promise<void> {
  const logging = parseLogOptions(
    { level: env['LOG_LEVEL'], format: env['LOG_FORMAT'] },
    process.stdout.isTTY === true,
  );
  const logger = createLogger(
    logging.level,
    logging.format === 'human' ? humanLogLines(process.stdout) : undefined,
  );
  const settings = loadSettings(env);
  const databaseUrl = settings.databaseUrl ?? defaultDatabaseUrl(settings.dataDir);
  const database = databaseTarget(databaseUrl);
  const shareLinkSecret = await loadShareLinkSecret({
    fromEnvironment: settings.shareLinkSecret,
    dataDir: settings.dataDir,
  });
  const services = await createServices({
    config: settings.config,
    databaseUrl,
    pendingMigrations: settings.migrateOnStart ? 'apply' : 'refuse',
    redisUrl: settings.redisUrl,
    assetsDir: path.join(settings.dataDir, 'assets'),
    storageSecrets: settings.storageSecrets,
    adminToken: settings.adminToken,
    metricsToken: settings.metricsToken,
    upstreamKeys: settings.upstreamKeys,
    shareLinkSecret: shareLinkSecret.key,
    stripe: settings.stripe,
    logger,
    processMetrics: true,
  }).catch((error: unknown) => {
    throw new StartupError(explainServicesError(error, database), { cause: error });
  });
  for (const warning of sharedStateWarnings(settings.config, services.store.dialect, {
    shareLinkSecretSource: shareLinkSecret.source,
  }))
    logger.warn(warning);
  const app = await buildApp(services);
  const sweeper = startSweeper(services, { config: settings.config, logger });
  services.taskWorker.start();

  try {
    await app.listen({ port: settings.port, host: settings.host });
  } catch (error) {
    // Close what was opened, but never let a slow close hide the reason: 5 s at most.
    sweeper.stop();
    const closed = app.close().then(() => services.close());
    await Promise.race([closed, delay(5_000, undefined, { ref: false })]).catch(() => undefined);
    throw new StartupError(explainListenError(error, settings), { cause: error });
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : settings.port;
  const facts = startupFacts(
    settings,
    { host: settings.host, port },
    database,
    undefined,
    services.pricesToSync.map((warning) => warning.model),
  );
  if (logging.format === 'human') process.stdout.write(describeStartup(facts));
  else logger.info({ ...facts, admin: facts.adminUrl !== undefined }, 'tollgate listening');

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    const times = {
      drainDelayMs: settings.config.server.shutdown_drain_delay_ms,
      graceMs: settings.config.server.shutdown_grace_ms,
    };
    // `/readyz` says 503 from here on (docs/operations.md, "Graceful shutdown").
    logger.info({ ...times, signal }, 'shutting down');
    shutDownGracefully(
      {
        drain: () => services.readiness.drain(),
        stopBackground: async () => {
          sweeper.stop();
          await services.taskWorker.stop();
        },
        closeServer: async () => {
          // Node closes the connections idle when closing starts; one whose last answer (a
          // stream) ends later would stay open for the keep-alive timeout: close those too.
          const idle = setInterval(() => app.server.closeIdleConnections(), 100);
          try {
            await app.close();
          } finally {
            clearInterval(idle);
          }
        },
        cutConnections: async () => {
          const open = await connectionsOf(app.server);
          app.server.closeAllConnections();
          // Streams still read (their callers gone or just cut) stop too: recorded as cut off.
          services.streamsInFlight.cut();
          return open;
        },
        closeServices: () => services.close(),
      },
      times,
      logger,
    )
      .then((outcome) => {
        logger.info({ outcome }, 'shut down');
        process.exit(0);
      })
      .catch((error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

/** How many connections the server holds open (for the log line of a forced shutdown). */
function connectionsOf(server: Server): Promise<number> {
  return new Promise((resolve) => server.getConnections((_error, count) => resolve(count)));
}

/**
 * Whether this module is the program (npm start), not a module imported by the CLI. Compared by
 * real path: through a symlinked checkout (`current -> releases/…`) `argv[1]` keeps the link
 * while `import.meta.url` is resolved, and the gateway would exit at once, silently.
 */
function isProgram(): boolean {
  const program = process.argv[1];
  if (program === undefined) return false;
  try {
    return realpathSync(program) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}

// A failure to start is printed as the lines of its explanation, without a stack trace
// (LOG_LEVEL=debug adds it).
if (isProgram()) {
  serve(process.env).catch((error: unknown) => {
    process.stderr.write(`tollgate: ${startupFailureMessage(error)}\n`);
    const level = process.env['LOG_LEVEL'];
    // The whole error, its causes' stacks included.
    if (level === 'debug' || level === 'trace') process.stderr.write(`${inspect(error)}\n`);
    process.exit(1);
  });
}
