// The PostgreSQL floors' batched statements: per variant, the claims (or the finishes) of a whole
// batch in one autocommit statement (decision 0018), refused as a whole unless every guard held.

// Each statement takes its batch as arrays (`unnest`), so it has one text whatever the batch's
// size and is prepared once per connection; it ends by refusing (rolling everything back) unless
// every guarded part moved what it had to.
const ACCOUNTS_LOCKED = (from) => `locked as (select id from accounts
    where id in (select account_id from ${from}) order by id for no key update)`;
export const STATEMENTS = {
  'pg-ordered-ids': {
    claim: `with input as (select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[],
        $6::text[], $7::text[], $8::text[], $9::text[], $10::bigint[], $11::bigint[])
      as i (request_id, hold_id, journal_id, account_id, key_id, idempotency_key, fingerprint, path, model,
        amount, created_at)),
    records as (insert into requests (id, key_id, account_id, idempotency_key, fingerprint, method, path, model,
        status, hold_id, reserve_amount, price_version, created_at, updated_at, expires_at)
      select request_id, key_id, account_id, idempotency_key, fingerprint, 'POST', path, model, 'processing',
        hold_id, amount, 'v1', created_at, created_at, created_at + 2592000000 from input returning 1),
    ${ACCOUNTS_LOCKED('input')},
    reserved as (update accounts a set held = a.held + s.total
      from (select account_id, sum(amount) total from input group by account_id) s
      where a.id = s.account_id and a.id in (select id from locked) and a.balance - a.held >= s.total
      returning a.id),
    hold_rows as (insert into holds (id, account_id, request_id, amount, state, price_version, created_at)
      select hold_id, account_id, request_id, amount, 'open', 'v1', created_at from input returning 1),
    entries as (insert into journal (id, account_id, kind, balance_delta, held_delta, hold_id, request_id,
        reason, created_at)
      select journal_id, account_id, 'hold', 0, amount, hold_id, request_id, 'reserve', created_at from input
      returning 1)
    select case when (select count(*) from reserved) = (select count(distinct account_id) from input)
      then 0 else floor_refuse('insufficient funds') end as refused`,
    finish: `with input as (select * from unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::int[],
        $6::text[], $7::text[], $8::bigint[])
      as i (request_id, hold_id, journal_id, amount, http_status, usage, response_body, created_at)),
    captured as (update holds h set state = 'captured', captured_amount = i.amount, resolved_at = i.created_at
      from input i where h.id = i.hold_id and h.state = 'open' and h.amount >= i.amount
      returning h.id, h.account_id, h.request_id, h.amount reserve, i.amount, i.journal_id, i.created_at),
    ${ACCOUNTS_LOCKED('captured')},
    settled as (update accounts a set balance = a.balance - s.amount, held = a.held - s.reserve
      from (select account_id, sum(amount) amount, sum(reserve) reserve from captured group by account_id) s
      where a.id = s.account_id and a.id in (select id from locked) returning a.id),
    entries as (insert into journal (id, account_id, kind, balance_delta, held_delta, hold_id, request_id,
        reason, created_at)
      select journal_id, account_id, 'capture', -amount, -reserve, id, request_id, 'capture', created_at
      from captured returning 1),
    outcomes as (update requests r set status = 'succeeded', http_status = i.http_status,
        response_body = i.response_body, usage = i.usage, amount = i.amount, updated_at = i.created_at
      from input i where r.id = i.request_id and r.status = 'processing' returning 1)
    select case when (select count(*) from captured) = cardinality($1::text[])
      and (select count(*) from outcomes) = cardinality($1::text[])
      then 0 else floor_refuse('hold not open') end as refused`,
  },
  'pg-event-log': {
    claim: `with input as (select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[],
        $6::text[], $7::text[], $8::bigint[], $9::bigint[])
      as i (request_id, account_id, key_id, idempotency_key, fingerprint, path, model, amount, created_at)),
    claimed as (insert into events (kind, request_id, account_id, key_id, idempotency_key, fingerprint, path,
        model, amount, created_at)
      select 'claim', request_id, account_id, key_id, idempotency_key, fingerprint, path, model, amount,
        created_at from input returning 1),
    ${ACCOUNTS_LOCKED('input')},
    reserved as (update accounts a set held = a.held + s.total
      from (select account_id, sum(amount) total from input group by account_id) s
      where a.id = s.account_id and a.id in (select id from locked) and a.balance - a.held >= s.total
      returning a.id)
    select case when (select count(*) from reserved) = (select count(distinct account_id) from input)
      then 0 else floor_refuse('insufficient funds') end as refused`,
    // Only from the request's claim and within its hold; a second finish breaks the unique
    // (request_id, kind): captured once.
    finish: `with input as (select * from unnest($1::text[], $2::bigint[], $3::int[], $4::text[], $5::text[],
        $6::bigint[]) as i (request_id, amount, http_status, usage, response_body, created_at)),
    finished as (insert into events (kind, request_id, account_id, amount, released, status, http_status, usage,
        response_body, created_at)
      select 'finish', c.request_id, c.account_id, i.amount, c.amount, 'succeeded', i.http_status, i.usage,
        i.response_body, i.created_at
      from input i join events c on c.request_id = i.request_id and c.kind = 'claim' and c.amount >= i.amount
      returning account_id, amount, released),
    ${ACCOUNTS_LOCKED('finished')},
    settled as (update accounts a set balance = a.balance - s.amount, held = a.held - s.released
      from (select account_id, sum(amount) amount, sum(released) released from finished group by account_id) s
      where a.id = s.account_id and a.id in (select id from locked) returning a.id)
    select case when (select count(*) from finished) = cardinality($1::text[])
      then 0 else floor_refuse('no claim to finish') end as refused`,
  },
};
STATEMENTS['pg-event-log-projected'] = STATEMENTS['pg-event-log'];
