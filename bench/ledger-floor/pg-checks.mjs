// The PostgreSQL floors' ledger check: the figures of a floor's schema (tables or event log, and
// the read model where built), judged by ledger-rules.mjs; `ledger-floor-pg.mjs --check`.
import { eventLogClean, tablesClean } from './ledger-rules.mjs';
import { INITIAL_BALANCE } from './money.mjs';
import { connect } from './pg-schema.mjs';

/**
 * The ledger of the floor's schema at `url`, as sqlite-checks.mjs's `ledgerFigures`: for the log,
 * no finish without its claim, none twice, releases equal to the holds, what is held equal to the
 * unfinished claims, the captures equal to the balance's drop, and the read model equal to the
 * log up to the (xid, seq) it reached; for the tables, the same through the holds and journal.
 */
export async function ledgerFigures(url, schema = 'public') {
  const client = await connect(url, schema);
  try {
    const one = async (query) => {
      const row = (await client.query(query)).rows[0];
      return Number(Object.values(row)[0]);
    };
    const balanceMoved =
      INITIAL_BALANCE - (await one("select balance from accounts where id = 'acct'"));
    const held = await one("select held from accounts where id = 'acct'");
    const isTrue = async (table) =>
      (await client.query(`select to_regclass('${table}') is not null as yes`)).rows[0].yes;
    if (await isTrue('events')) {
      const figures = {
        schema: 'event-log',
        requests: await one("select count(*) from events where kind = 'claim'"),
        finished: await one("select count(*) from events where kind = 'finish'"),
        finishedWithoutClaim:
          await one(`select count(*) from events f where f.kind = 'finish' and not exists
          (select 1 from events c where c.request_id = f.request_id and c.kind = 'claim')`),
        capturedTwice: await one(`select count(*) from (select request_id from events
          where kind = 'finish' group by request_id having count(*) > 1) twice`),
        releasedOtherThanHeld:
          await one(`select count(*) from events f join events c on c.request_id = f.request_id
          and c.kind = 'claim' where f.kind = 'finish' and (f.released <> c.amount or f.amount > c.amount)`),
        held,
        openHeld:
          await one(`select coalesce(sum(amount), 0) from events c where c.kind = 'claim' and not exists
          (select 1 from events f where f.request_id = c.request_id and f.kind = 'finish')`),
        balanceMoved,
        captured: await one("select coalesce(sum(amount), 0) from events where kind = 'finish'"),
      };
      if (await isTrue('projection')) Object.assign(figures, await projectionFigures(one));
      return { clean: eventLogClean(figures), figures };
    }
    const figures = {
      schema: 'tables',
      requests: await one('select count(*) from requests'),
      unsucceeded: await one("select count(*) from requests where status <> 'succeeded'"),
      openHolds: await one("select count(*) from holds where state = 'open'"),
      capturedTwice: await one(`select count(*) from (select request_id from journal
        where kind = 'capture' group by request_id having count(*) > 1) twice`),
      held,
      openHeld: await one("select coalesce(sum(amount), 0) from holds where state = 'open'"),
      balanceMoved,
      journalMoved: -(await one('select coalesce(sum(balance_delta), 0) from journal')),
      captured: await one(
        "select coalesce(sum(amount), 0) from requests where status = 'succeeded'",
      ),
    };
    return { clean: tablesClean(figures), figures };
  } finally {
    await client.end();
  }
}

/** The read model against the log up to the (xid, seq) the projector reached. */
async function projectionFigures(one) {
  const reached = `(xid, seq) <= (select last_xid, last_seq from projection where name = 'read-model')`;
  const upTo = (kind, what) =>
    one(`select ${what} from events where kind = '${kind}' and ${reached}`);
  const expected = {
    records: await upTo('claim', 'count(*)'),
    succeeded: await upTo('finish', 'count(*)'),
    captured: await upTo('finish', 'coalesce(sum(amount), 0)'),
    entries: await one(`select count(*) from events where ${reached}`),
    statementMoved: -(await upTo('finish', 'coalesce(sum(amount), 0)')),
    statementHeld:
      (await upTo('claim', 'coalesce(sum(amount), 0)')) -
      (await upTo('finish', 'coalesce(sum(released), 0)')),
  };
  const actual = {
    records: await one('select count(*) from records'),
    succeeded: await one("select count(*) from records where status = 'succeeded'"),
    captured: await one("select coalesce(sum(amount), 0) from records where status = 'succeeded'"),
    entries: await one('select count(*) from statement'),
    statementMoved: await one('select coalesce(sum(balance_delta), 0) from statement'),
    statementHeld: await one('select coalesce(sum(held_delta), 0) from statement'),
  };
  return {
    projectedTo: await one("select last_seq from projection where name = 'read-model'"),
    lag: await one(`select count(*) from events where not (${reached})`),
    readModelMismatches: Object.keys(expected).filter((name) => expected[name] !== actual[name])
      .length,
  };
}

export async function checkLedger(url, label = 'ledger-floor-pg') {
  const { clean, figures } = await ledgerFigures(url);
  console.log(`  ${label}: ${clean ? 'clean' : 'NOT clean'} ${JSON.stringify(figures)}`);
  return clean ? 0 : 1;
}
