import type { Config } from '../config/schema.js';
import type { DialectName } from '../store/database.js';

/**
 * What an instance keeps on its own machine or in its own process although a PostgreSQL
 * deployment is meant to run several instances (docs/operations.md, "Several instances"): each
 * is logged as a `warn` at every start, so an operator adding a second instance reads why it
 * would not work. On SQLite (one process by design) nothing is said. Refusing to start would
 * break a single-instance PostgreSQL deployment, which is legitimate: these are warnings.
 */
export function sharedStateWarnings(
  config: Config,
  dialect: DialectName,
  /** Where the share-link secret came from (shares/share-link-secret.ts); unknown: not said. */
  facts: { readonly shareLinkSecretSource?: 'environment' | 'file' } = {},
): string[] {
  if (dialect !== 'postgres') return [];
  const warnings: string[] = [];
  if (facts.shareLinkSecretSource === 'file')
    warnings.push(
      `the share-link secret was generated in this machine's data directory because ` +
        `${config.server.share_link_secret_env} is not set, while the database is PostgreSQL: ` +
        'another instance generates its own, and shows no public link for a share asked for ' +
        'from the console on another instance (the link still opens). ' +
        `Set ${config.server.share_link_secret_env} to the same secret (32 characters ` +
        'or more) on every instance (docs/shares.md, "The token")',
    );
  if (config.storage.kind === 'local')
    warnings.push(
      'asset files are stored on this machine (storage.kind "local") while the database is ' +
        'PostgreSQL: other instances cannot read the assets and outputs this one stores. ' +
        'Run one instance only, or set storage.kind "s3" (docs/assets.md) before adding a second',
    );
  const simulated = Object.entries(config.upstreams)
    .filter(([, upstream]) => upstream.kind === 'simulator')
    .map(([name]) => name);
  if (simulated.length > 0)
    warnings.push(
      `upstream ${simulated.join(', ')} is the simulator inside this process: a video or H3 job ` +
        'it accepted is answered only by this instance, so another instance polling it finds ' +
        'no such job. With several instances run `tollgate sim` once and point the upstreams ' +
        'at its base URL (docs/simulator.md)',
    );
  return warnings;
}
