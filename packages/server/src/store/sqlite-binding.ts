import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

/**
 * The SQLite binding for this Node version. better-sqlite3 12 (compiled here from source) is the
 * last line that runs on Node 20, but on Node 24 its `Statement` destructor can abort the
 * process when V8 collects a statement while no Node environment is current (seen at exit and
 * under load: WiseLibs/better-sqlite3#1515). Version 13 (node-addon-api, prebuilt in the
 * package, aliased as `better-sqlite3-napi`) fixes that but needs Node 22. Same API, so pick by
 * the running major version. See docs/decisions/0005-two-sqlite-bindings.md.
 */
const require = createRequire(import.meta.url);
const major = Number(process.versions.node.split('.')[0]);

/** The resolved module of the binding in use (the checkpoint worker loads the same one). */
export const sqliteBindingPath = require.resolve(
  major >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3',
);
export const SqliteDatabase = require(sqliteBindingPath) as typeof BetterSqlite3;
export type SqliteDatabase = BetterSqlite3.Database;
