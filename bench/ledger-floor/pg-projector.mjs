// The PostgreSQL floors' projector (pg-event-log-projected): the xmin rule that reads the log in
// (xid, seq) order, and the batch it applies to the read model.

export const PROJECTED_PER_BATCH = 4096;
/**
 * The projector: one transaction per batch. Its snapshot's xmin first — every transaction with an
 * id below it has ended, and any later one gets a larger id — then the events after the (xid,
 * seq) reached, of transactions below that xmin, in (xid, seq) order: what it applies can never be
 * overtaken by an event committed later, whatever order the sequence was taken in. A claim always
 * sorts before its finish (the finish's transaction began after the claim's had committed). With
 * `rule: 'seq'` (the self-test's counter-example only), the naive reader: `seq > last`.
 */
export function projector(client, { rule = 'xmin', perBatch = PROJECTED_PER_BATCH } = {}) {
  const read =
    rule === 'xmin'
      ? `select seq, xid::text xid, kind, request_id, account_id, key_id, amount, released, created_at
         from events where (xid, seq) > ($1::xid8, $2::bigint) and xid < $3::xid8
         order by xid, seq limit $4`
      : `select seq, xid::text xid, kind, request_id, account_id, key_id, amount, released, created_at
         from events where seq > $2::bigint and $1::xid8 is not null and $3::xid8 is not null
         order by seq limit $4`;
  return async function project() {
    await client.query('begin');
    try {
      const xmin = (
        await client.query({
          name: 'floor-xmin',
          text: 'select pg_snapshot_xmin(pg_current_snapshot())::text xmin',
        })
      ).rows[0].xmin;
      const cursor = (
        await client.query(
          "select last_xid::text xid, last_seq seq from projection where name = 'read-model' for update",
        )
      ).rows[0];
      const { rows: events } = await client.query({
        name: `floor-events-${rule}`,
        text: read,
        values: [cursor.xid, cursor.seq, xmin, perBatch],
      });
      if (events.length > 0) await apply(client, events);
      await client.query('commit');
      return events.length;
    } catch (error) {
      await client.query('rollback');
      throw error;
    }
  };
}

/** A batch of events into the read model: the claims' records, then the finishes', the entries. */
async function apply(client, events) {
  const claims = events.filter((event) => event.kind === 'claim');
  const finishes = events.filter((event) => event.kind === 'finish');
  const pick = (rows, ...names) => names.map((name) => rows.map((row) => row[name]));
  if (claims.length > 0)
    await client.query({
      name: 'floor-records',
      text: `insert into records (id, key_id, account_id, status, reserve_amount, created_at, updated_at,
          expires_at, claim_seq)
        select request_id, key_id, account_id, 'processing', amount, created_at, created_at,
          created_at + 2592000000, seq
        from unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[])
          as i (request_id, key_id, account_id, amount, created_at, seq)`,
      values: pick(claims, 'request_id', 'key_id', 'account_id', 'amount', 'created_at', 'seq'),
    });
  if (finishes.length > 0)
    await client.query({
      name: 'floor-outcomes',
      text: `update records r set status = 'succeeded', amount = i.amount, updated_at = i.created_at,
          finish_seq = i.seq
        from unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[]) as i (request_id, amount, created_at, seq)
        where r.id = i.request_id`,
      values: pick(finishes, 'request_id', 'amount', 'created_at', 'seq'),
    });
  await client.query({
    name: 'floor-entries',
    text: `insert into statement (seq, account_id, request_id, kind, balance_delta, held_delta, created_at)
      select seq, account_id, request_id, case when kind = 'claim' then 'hold' else 'capture' end,
        case when kind = 'claim' then 0 else -amount end,
        case when kind = 'claim' then amount else -released end, created_at
      from unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::bigint[])
        as i (seq, account_id, request_id, kind, amount, released, created_at)`,
    values: pick(
      events,
      'seq',
      'account_id',
      'request_id',
      'kind',
      'amount',
      'released',
      'created_at',
    ),
  });
  const last = events.at(-1);
  await client.query(
    "update projection set last_xid = $1::xid8, last_seq = $2 where name = 'read-model'",
    [last.xid, last.seq],
  );
}
