// `ledger-floor-pg.mjs --self-test`: each PostgreSQL variant end to end in a schema of its own, and
// the projector's out-of-order-commit test.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout } from 'node:timers';
import { fileURLToPath } from 'node:url';
import { ledgerFigures } from './pg-checks.mjs';
import { projector } from './pg-projector.mjs';
import { connect, createSchema } from './pg-schema.mjs';
import { openStore } from './pg-store.mjs';
import {
  checkSelfTestFigures,
  gatewayBurst,
  secondAttemptsRefused,
  testUpstream,
} from './self-test.mjs';

/** bench/ledger-floor-pg.mjs, the entry point: the self-test's gateways are children running it. */
const PG_FLOOR_SCRIPT = fileURLToPath(new URL('../ledger-floor-pg.mjs', import.meta.url));

/**
 * Each variant end to end, in a schema of its own on FLOOR_PG_URL's database (dropped after):
 * as ledger-floor.mjs's self-test (24 requests billed once, a replayed key refused, a second
 * finish and a second claim refused with a larger hold open, the ledger clean and caught up);
 * then the projector's out-of-order-commit test. Exit code.
 */
export async function selfTest(url, variants) {
  const upstream = await testUpstream();
  const requests = 24;
  const outcomes = await Promise.all(
    [...variants, 'projector-order'].map(async (variant) => {
      const problems = [];
      const schema = `floor_self_test_${variant.replaceAll('-', '_')}_${process.pid}`;
      const admin = await connect(url, 'public');
      await admin.query(`create schema ${schema}`);
      try {
        if (variant === 'projector-order') await projectorOrderTest(url, schema, problems);
        else await selfTestOne(url, schema, variant, upstream, requests, problems);
      } catch (error) {
        problems.push(String(error?.stack ?? error));
      } finally {
        await admin.query(`drop schema ${schema} cascade`);
        await admin.end();
      }
      return [variant, problems];
    }),
  );
  upstream.close();
  for (const [variant, problems] of outcomes)
    console.log(
      `  ${variant}: ${problems.length === 0 ? (variant === 'projector-order' ? 'ok (the later sequence committed first: the projector waited for the earlier transaction, then applied both, once each; a seq cursor would have stepped over it)' : `ok (${requests} requests billed once, a replayed key refused, a second finish and a second claim refused with a hold open, ledger clean)`) : `FAILED: ${problems.join('; ')}`}`,
    );
  return outcomes.every(([, problems]) => problems.length === 0) ? 0 : 1;
}

async function selfTestOne(url, schema, variant, upstream, requests, problems) {
  const dir = mkdtempSync(path.join(tmpdir(), `floor-pg-self-test-${variant}-`));
  try {
    const env = {
      UPSTREAM_URL: `http://127.0.0.1:${upstream.address().port}`,
      FLOOR_PG_URL: url,
      FLOOR_PG_SCHEMA: schema,
      FLOOR_VARIANT: variant,
      FLOOR_DATA_DIR: dir,
    };
    await gatewayBurst(PG_FLOOR_SCRIPT, env, requests, problems);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const store = await openStore(url, schema, variant);
  try {
    const reader = await connect(url, schema);
    const captured = (
      await reader.query(
        variant === 'pg-ordered-ids'
          ? `select id request, hold_id hold, reserve_amount::float8 reserve from requests
             where status = 'succeeded' limit 1`
          : `select c.request_id request, c.amount::float8 reserve from events c join events f
             on f.request_id = c.request_id and f.kind = 'finish' where c.kind = 'claim' limit 1`,
      )
    ).rows[0];
    await reader.end();
    await secondAttemptsRefused(store, captured, problems);
    await store.catchUp();
  } finally {
    await store.close();
  }
  const { clean, figures } = await ledgerFigures(url, schema);
  checkSelfTestFigures(clean, figures, requests, problems);
}

/**
 * PostgreSQL's sequence is not commit-ordered. Transaction A claims (seq n, xid a) and stays
 * open; B claims after it (seq n + 1, xid b > a) and commits first. A `seq > last` reader would
 * see n + 1 and move past n for good (shown, so the test is known to test something); the
 * projector must apply nothing of B while A is open, then both once A commits, each once; and a
 * rolled-back transaction in between must not stop it.
 */
async function projectorOrderTest(url, schema, problems) {
  const setup = await connect(url, schema);
  await createSchema(setup, 'pg-event-log-projected');
  const [a, b, c, projecting] = await Promise.all(
    Array.from({ length: 4 }, () => connect(url, schema)),
  );
  // Events alone, without the account updates (which would make B wait for A's row lock): what
  // is tested is the projector's order, checked on the read model against the log.
  const claim = (client, request) =>
    client.query(
      `insert into events (kind, request_id, account_id, key_id, idempotency_key, amount, created_at)
       values ('claim', $1, 'acct', 'key', $1, 100, 0) returning seq`,
      [request],
    );
  const finish = (client, request) =>
    client.query(
      `insert into events (kind, request_id, account_id, amount, released, status, created_at)
       select 'finish', request_id, account_id, 40, amount, 'succeeded', 0 from events
       where request_id = $1 and kind = 'claim'`,
      [request],
    );
  try {
    const project = projector(projecting);
    await a.query('begin');
    const seqA = Number((await claim(a, 'req-a')).rows[0].seq);
    await b.query('begin');
    const seqB = Number((await claim(b, 'req-b')).rows[0].seq);
    await b.query('commit');
    if (!(seqB > seqA)) problems.push(`B's sequence ${seqB} is not after A's ${seqA}`);
    const naive = (await setup.query('select seq from events where seq > 0 order by seq')).rows;
    if (naive.length !== 1 || Number(naive[0].seq) !== seqB)
      problems.push('the counter-example did not arise: a seq reader would not have skipped');
    if ((await project()) !== 0)
      problems.push('the projector applied an event while an older transaction was open');
    await c.query('begin');
    await claim(c, 'req-c');
    await c.query('rollback');
    await a.query('commit');
    await finish(a, 'req-a');
    // The xmin is the whole server's: any transaction with an id, in any database (another
    // self-test's, someone else's), holds the projector back while it runs. So it is asked again
    // every 20 ms, as its 50 ms interval would, for up to 10 s.
    let applied = 0;
    for (let tries = 0; applied < 3 && tries < 500; tries += 1) {
      applied += await project();
      if (applied < 3) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    if (applied !== 3) problems.push(`the projector applied ${applied} events, not 3`);
    const records = (await setup.query('select id, status from records order by id')).rows;
    if (
      JSON.stringify(records) !==
      JSON.stringify([
        { id: 'req-a', status: 'succeeded' },
        { id: 'req-b', status: 'processing' },
      ])
    )
      problems.push(`the read model holds ${JSON.stringify(records)}`);
    if ((await project()) !== 0) problems.push('the projector applied an event twice');
    const { figures } = await ledgerFigures(url, schema);
    if (figures.readModelMismatches !== 0 || figures.lag !== 0)
      problems.push(`the read model is not the log's ${JSON.stringify(figures)}`);
  } finally {
    await Promise.all([setup, a, b, c, projecting].map((client) => client.end()));
  }
}
