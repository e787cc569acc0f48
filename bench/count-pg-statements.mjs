// Counts the gateway's PostgreSQL statements by kind (its first words: `insert into "requests"`,
// `commit`, ...), for bench/many-accounts.sh with BENCH_COUNT_PG=1: loaded with `node --import`,
// it wraps `pg`'s Client#query (which the gateway's named-statement wrapper also ends in) and
// writes the running counts to $BENCH_PG_COUNTS every 200 ms. A diagnostic: it costs some CPU.
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { setInterval } from 'node:timers';

// The gateway's own `pg` (a CommonJS module: its `import('pg')` gets this very instance).
const pg = createRequire(`${process.cwd()}/`)('pg');

const counts = {};
const kindOf = (text) =>
  String(text)
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase()
    .match(/^(with|select|insert into|update|delete from|begin|commit|rollback)\s*("?\w+"?)?/)
    ?.slice(1)
    .filter(Boolean)
    .join(' ')
    .replaceAll('"', '') ?? 'other';
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function countedQuery(config, ...rest) {
  const kind = kindOf(typeof config === 'string' ? config : config?.text);
  counts[kind] = (counts[kind] ?? 0) + 1;
  return query.call(this, config, ...rest);
};
const file = process.env.BENCH_PG_COUNTS;
if (file) setInterval(() => writeFileSync(file, JSON.stringify(counts)), 200).unref();
