import path from 'node:path';

/** Where the embedded SQLite file lives when no database URL is given. */
export function defaultDatabaseUrl(dataDir: string): string {
  return `sqlite:${path.join(dataDir, 'tollgate.sqlite')}`;
}
