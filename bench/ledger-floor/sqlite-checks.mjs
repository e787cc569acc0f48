// The SQLite floors' ledger check: the figures of a floor's database (tables or event log, and the
// read model where built), judged by ledger-rules.mjs; `ledger-floor.mjs --check`.
import { eventLogClean, tablesClean } from './ledger-rules.mjs';
import { INITIAL_BALANCE } from './money.mjs';
import { Database } from './sqlite.mjs';

/**
 * The floor's ledger, whichever schema: every hold resolved or still open and held, the journal's
 * sum equal to the balance's movement and to the captures, no request captured twice. A run ends
 * by stopping the floor with requests in flight: their records stay `processing` with their holds
 * open (Tollgate's sweeper resolves such; the floor has none), still held.
 */
export function ledgerFigures(databaseFile) {
  const store = new Database(databaseFile, { readonly: true });
  try {
    const one = (query) => store.prepare(query).get();
    const balanceMoved =
      INITIAL_BALANCE - one("select balance from accounts where id = 'acct'").balance;
    const held = one("select held from accounts where id = 'acct'").held;
    if (one("select count(*) n from sqlite_master where name = 'events'").n === 1) {
      const figures = {
        schema: 'event-log',
        requests: one("select count(*) n from events where kind = 'claim'").n,
        finished: one("select count(*) n from events where kind = 'finish'").n,
        finishedWithoutClaim:
          one(`select count(*) n from events f where f.kind = 'finish' and not exists
          (select 1 from events c where c.request_id = f.request_id and c.kind = 'claim')`).n,
        capturedTwice:
          one(`select count(*) n from (select request_id from events where kind = 'finish'
          group by request_id having count(*) > 1)`).n,
        releasedOtherThanHeld:
          one(`select count(*) n from events f join events c on c.request_id = f.request_id
          and c.kind = 'claim' where f.kind = 'finish' and (f.released <> c.amount or f.amount > c.amount)`)
            .n,
        held,
        openHeld:
          one(`select coalesce(sum(amount), 0) s from events c where c.kind = 'claim' and not exists
          (select 1 from events f where f.request_id = c.request_id and f.kind = 'finish')`).s,
        balanceMoved,
        captured: one("select coalesce(sum(amount), 0) s from events where kind = 'finish'").s,
      };
      if (one("select count(*) n from sqlite_master where name = 'projection'").n === 1)
        Object.assign(figures, projectionFigures(one));
      return { clean: eventLogClean(figures), figures };
    }
    const figures = {
      schema: 'tables',
      requests: one('select count(*) n from requests').n,
      unsucceeded: one("select count(*) n from requests where status <> 'succeeded'").n,
      openHolds: one("select count(*) n from holds where state = 'open'").n,
      capturedTwice:
        one(`select count(*) n from (select request_id from journal where kind = 'capture'
        group by request_id having count(*) > 1)`).n,
      held,
      openHeld: one("select coalesce(sum(amount), 0) s from holds where state = 'open'").s,
      balanceMoved,
      journalMoved: -one('select coalesce(sum(balance_delta), 0) s from journal').s,
      captured: one("select coalesce(sum(amount), 0) s from requests where status = 'succeeded'").s,
    };
    return { clean: tablesClean(figures), figures };
  } finally {
    store.close();
  }
}

/**
 * The read model of event-log-projected against the log up to the sequence it reached: a record
 * per claim, succeeded where finished, with the captured amount; a statement entry per event, its
 * sums equal to the events'. `lag`: events not yet projected (a run stops the floor mid-flight).
 */
function projectionFigures(one) {
  const last = one("select last_seq s from projection where name = 'read-model'").s;
  const upTo = (kind, what) =>
    one(`select ${what} v from events where kind = '${kind}' and seq <= ${last}`).v;
  const expected = {
    records: upTo('claim', 'count(*)'),
    succeeded: upTo('finish', 'count(*)'),
    captured: upTo('finish', 'coalesce(sum(amount), 0)'),
    entries: one(`select count(*) v from events where seq <= ${last}`).v,
    statementMoved: -upTo('finish', 'coalesce(sum(amount), 0)'),
    statementHeld:
      upTo('claim', 'coalesce(sum(amount), 0)') - upTo('finish', 'coalesce(sum(released), 0)'),
  };
  const actual = {
    records: one('select count(*) v from records').v,
    succeeded: one("select count(*) v from records where status = 'succeeded'").v,
    captured: one("select coalesce(sum(amount), 0) v from records where status = 'succeeded'").v,
    entries: one('select count(*) v from statement').v,
    statementMoved: one('select coalesce(sum(balance_delta), 0) v from statement').v,
    statementHeld: one('select coalesce(sum(held_delta), 0) v from statement').v,
  };
  return {
    projectedTo: last,
    lag: one('select coalesce(max(seq), 0) v from events').v - last,
    readModelMismatches: Object.keys(expected).filter((name) => expected[name] !== actual[name])
      .length,
  };
}

/** `--check DIR [LABEL]`: prints the ledger's figures; returns the exit code. */
export function checkLedger(databaseFile, label = 'ledger-floor') {
  const { clean, figures } = ledgerFigures(databaseFile);
  console.log(`  ${label}: ${clean ? 'clean' : 'NOT clean'} ${JSON.stringify(figures)}`);
  return clean ? 0 : 1;
}
