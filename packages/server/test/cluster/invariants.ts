import { sql, type Kysely } from 'kysely';
import { checkLedger } from '../../src/billing/ledger-check.js';
import type { Database } from '../../src/store/schema.js';
import type { Attempt } from './journal.js';

/**
 * The battery's checks after a run (issue 21): each compares what the client journalled with the
 * database (and the upstream's count of submissions) and lists what does not hold. Each is proven
 * to find a tampered database by test/cluster/invariants.test.ts.
 */
export interface Violation {
  readonly check: string;
  readonly subject: string;
  readonly detail: string;
}

/** Every check of `tollgate ledger check` (billing/ledger-check.ts), as the CLI runs it. */
export async function ledgerClean(db: Kysely<Database>): Promise<Violation[]> {
  const report = await checkLedger(db);
  return report.violations.map((violation) => ({
    check: `ledger:${violation.invariant}`,
    subject: violation.subject,
    detail: violation.detail,
  }));
}

/**
 * Money conserved from the client's side: every top-up in the database is one the client sent
 * (its reference, its amount), every top-up the client saw acknowledged is there, and all top-ups
 * equal all balances plus all captures, to the micro-yuan.
 */
export async function moneyConserved(
  db: Kysely<Database>,
  attempts: readonly Attempt[],
): Promise<Violation[]> {
  const violations: Violation[] = [];
  const sent = new Map<string, number>();
  const acknowledged = new Set<string>();
  for (const attempt of attempts.filter((each) => each.kind === 'topup')) {
    sent.set(attempt.idempotencyKey, attempt.amount ?? Number.NaN);
    if (attempt.succeeded) acknowledged.add(attempt.idempotencyKey);
  }
  const topups = await db.selectFrom('topups').select(['reference', 'amount']).execute();
  const stored = new Map(topups.map((topup) => [topup.reference, Number(topup.amount)]));
  for (const [reference, amount] of stored)
    if (sent.get(reference) !== amount)
      violations.push({
        check: 'money_conserved',
        subject: reference,
        detail: `top-up of ${amount} the client never sent (sent: ${String(sent.get(reference))})`,
      });
  for (const reference of acknowledged)
    if (!stored.has(reference))
      violations.push({
        check: 'money_conserved',
        subject: reference,
        detail: 'top-up acknowledged to the client is not in the database',
      });
  const total = (text: string | null | undefined) => BigInt(text ?? '0');
  const [sums] = await sql<{
    topups: string | null;
    balances: string | null;
    captured: string | null;
  }>`
    select
      (select cast(coalesce(sum(amount), 0) as text) from topups) as topups,
      (select cast(coalesce(sum(balance), 0) as text) from accounts) as balances,
      (select cast(coalesce(sum(captured_amount), 0) as text) from holds where state = 'captured')
        as captured`
    .execute(db)
    .then((result) => result.rows);
  const topupTotal = total(sums?.topups);
  const kept = total(sums?.balances) + total(sums?.captured);
  if (topupTotal !== kept)
    violations.push({
      check: 'money_conserved',
      subject: 'all accounts',
      detail: `top-ups ${topupTotal} != balances + captures ${kept}`,
    });
  return violations;
}

/**
 * No idempotency key charged twice: in the database at most one capture per (API key,
 * idempotency key); at the client, every success of one idempotency key names one request id
 * (a retry is answered by a replay of the first, never by a second request).
 */
export async function noIdempotencyKeyChargedTwice(
  db: Kysely<Database>,
  attempts: readonly Attempt[],
): Promise<Violation[]> {
  const violations: Violation[] = [];
  const captures = await db
    .selectFrom('journal')
    .innerJoin('requests', 'requests.id', 'journal.request_id')
    .where('journal.kind', '=', 'capture')
    .select(['requests.key_id', 'requests.idempotency_key', sql<number>`count(*)`.as('captures')])
    .groupBy(['requests.key_id', 'requests.idempotency_key'])
    .having(sql`count(*)`, '>', 1)
    .execute();
  for (const row of captures)
    violations.push({
      check: 'charged_once',
      subject: row.idempotency_key,
      detail: `${row.captures} captures for one idempotency key of ${row.key_id}`,
    });
  const answered = new Map<string, Set<string>>();
  for (const attempt of attempts)
    // Top-ups and disables carry no Idempotency-Key (two workers may disable one key at once).
    if (attempt.succeeded && attempt.requestId !== undefined && sendsIdempotencyKey(attempt)) {
      const ids = answered.get(attempt.idempotencyKey) ?? new Set<string>();
      ids.add(attempt.requestId);
      answered.set(attempt.idempotencyKey, ids);
    }
  for (const [key, ids] of answered)
    if (ids.size > 1)
      violations.push({
        check: 'charged_once',
        subject: key,
        detail: `one idempotency key answered by ${ids.size} requests: ${[...ids].join(', ')}`,
      });
  return violations;
}

function sendsIdempotencyKey(attempt: Attempt): boolean {
  return attempt.kind !== 'topup' && attempt.kind !== 'disable';
}

/** No task submitted upstream twice: the upstream's own count of submissions per task. */
export function noTaskSubmittedTwice(submissions: ReadonlyMap<string, number>): Violation[] {
  return [...submissions]
    .filter(([, count]) => count > 1)
    .map(([task, count]) => ({
      check: 'submitted_once',
      subject: task,
      detail: `${count} submissions reached the upstream`,
    }));
}

/** Usage fields the client saw that the record must show the same. */
const USAGE_FIELDS = ['prompt_tokens', 'completion_tokens', 'total_tokens'] as const;

/**
 * Every request the client saw succeed has its record: a chat or embeddings success is a
 * `succeeded` record of that key and idempotency key, with the usage the client saw and its bill
 * captured (the hold's capture equals the record's amount); a video's 202 is an `accepted` record
 * of that task; a settle's 200 is the task settled at the amount the client sent.
 */
export async function successesRecorded(
  db: Kysely<Database>,
  attempts: readonly Attempt[],
): Promise<Violation[]> {
  const violations: Violation[] = [];
  const add = (subject: string, detail: string) =>
    violations.push({ check: 'success_recorded', subject, detail });
  for (const attempt of attempts.filter((each) => each.succeeded)) {
    if (attempt.kind === 'settle') {
      const task = await db
        .selectFrom('tasks')
        .select(['billing_state', 'settled_amount'])
        .where('id', '=', attempt.taskId ?? '')
        .executeTakeFirst();
      if (task?.billing_state !== 'settled' || Number(task.settled_amount) !== attempt.amount)
        add(
          attempt.taskId ?? '?',
          `settled for ${attempt.amount}, task shows ${JSON.stringify(task)}`,
        );
      continue;
    }
    if (!['chat', 'chat_stream', 'embeddings', 'video'].includes(attempt.kind)) continue;
    const record = await db
      .selectFrom('requests')
      .leftJoin('holds', 'holds.id', 'requests.hold_id')
      .select([
        'requests.status',
        'requests.key_id',
        'requests.idempotency_key',
        'requests.usage',
        'requests.amount',
        'requests.task_id',
        'holds.state as hold_state',
        'holds.captured_amount',
      ])
      .where('requests.id', '=', attempt.requestId ?? '')
      .executeTakeFirst();
    const subject = attempt.requestId ?? attempt.idempotencyKey;
    if (
      record === undefined ||
      record.key_id !== attempt.keyId ||
      record.idempotency_key !== attempt.idempotencyKey
    ) {
      add(subject, `the client saw ${attempt.status}; no record of its key and idempotency key`);
      continue;
    }
    if (attempt.kind === 'video') {
      if (record.status !== 'accepted' || record.task_id !== attempt.taskId)
        add(subject, `202 for ${attempt.taskId}; record ${record.status} of ${record.task_id}`);
      continue;
    }
    if (record.status !== 'succeeded')
      add(subject, `the client saw success; record ${record.status}`);
    if (
      record.hold_state !== 'captured' ||
      Number(record.captured_amount) !== Number(record.amount)
    )
      add(
        subject,
        `bill ${record.amount}, hold ${record.hold_state} for ${record.captured_amount}`,
      );
    const stored = JSON.parse(record.usage ?? '{}') as Record<string, unknown>;
    for (const field of USAGE_FIELDS) {
      const seen = attempt.usage?.[field];
      if (seen !== undefined && stored[field] !== seen)
        add(subject, `${field}: client saw ${seen}, record has ${String(stored[field])}`);
    }
  }
  return violations;
}

/**
 * Every record is in a state its money can rest in: succeeded, failed, accepted, resolved,
 * `submission_unknown` or `awaiting_funds` with its hold (if it took one) still open — and none `processing`
 * longer than the sweeper's stale age before `now`.
 */
export async function recordsSettled(
  db: Kysely<Database>,
  now: number,
  staleAfterMs: number,
): Promise<Violation[]> {
  const violations: Violation[] = [];
  const records = await db
    .selectFrom('requests')
    .leftJoin('holds', 'holds.id', 'requests.hold_id')
    .select([
      'requests.id',
      'requests.path',
      'requests.status',
      'requests.updated_at',
      'requests.hold_id',
      'holds.state as hold_state',
    ])
    .where('requests.status', 'not in', ['succeeded', 'failed', 'accepted', 'resolved'])
    .execute();
  for (const record of records) {
    if (record.status === 'processing') {
      if (Number(record.updated_at) < now - staleAfterMs)
        violations.push({
          check: 'records_settled',
          subject: record.id,
          detail: `processing since ${new Date(Number(record.updated_at)).toISOString()}, past the sweeper's bound`,
        });
      continue;
    }
    // A record that never held money (a settle, an upload) has no hold to keep open.
    if (record.hold_id !== null && record.hold_state !== 'open')
      violations.push({
        check: 'records_settled',
        subject: record.id,
        detail: `${record.status} ${record.path} without its open hold (hold ${String(record.hold_state)})`,
      });
  }
  return violations;
}

/** No balance negative: now in the database, and in every sample the client took during the run. */
export async function noNegativeBalance(
  db: Kysely<Database>,
  samples: readonly string[],
): Promise<Violation[]> {
  const negative = await db
    .selectFrom('accounts')
    .select(['id', 'balance', 'held'])
    .where((where) =>
      where.or([
        where('balance', '<', 0),
        where('held', '<', 0),
        where(sql`balance - held`, '<', 0),
      ]),
    )
    .execute();
  return [
    ...negative.map((account) => ({
      check: 'no_negative_balance',
      subject: account.id,
      detail: `balance ${account.balance}, held ${account.held}`,
    })),
    ...samples.map((sample) => ({
      check: 'no_negative_balance',
      subject: 'sample',
      detail: sample,
    })),
  ];
}

/** A stretch of client time (ms) in which a fault may have kept an instance from hearing notices. */
export interface TimeWindow {
  readonly from: number;
  readonly to: number;
}

/**
 * Attempts made with a key after its disable was acknowledged and `boundMs` passed (whatever
 * their answer), split into those the check judges and those sent inside one of `excused`.
 */
export function attemptsWithDisabledKeys(
  attempts: readonly Attempt[],
  boundMs: number,
  excused: readonly TimeWindow[] = [],
): { judged: (Attempt & { disabledFor: number })[]; excused: number } {
  const disabledAt = new Map<string, number>();
  for (const attempt of attempts)
    if (attempt.kind === 'disable' && attempt.succeeded && attempt.keyId !== undefined)
      disabledAt.set(
        attempt.keyId,
        Math.min(attempt.endedAt, disabledAt.get(attempt.keyId) ?? Infinity),
      );
  const inFaultWindow = (at: number) =>
    excused.some((window) => at >= window.from && at <= window.to);
  const judged: (Attempt & { disabledFor: number })[] = [];
  let excusedCount = 0;
  for (const attempt of attempts) {
    if (attempt.kind === 'disable' || attempt.keyId === undefined) continue;
    const since = disabledAt.get(attempt.keyId);
    if (since === undefined || attempt.sentAt <= since + boundMs) continue;
    if (inFaultWindow(attempt.sentAt)) excusedCount += 1;
    else judged.push({ ...attempt, disabledFor: attempt.sentAt - since });
  }
  return { judged, excused: excusedCount };
}

/**
 * A key disabled (the admin call answered) is refused by every instance once `boundMs` passed:
 * no request sent with it after that may succeed. Attempts sent inside one of `excused` are not
 * judged: while an instance's listening connection is lost (and until it listens again and
 * forgets every cached key) a change notice can be missed, and only the caches' TTL bounds it
 * then (docs/operations.md, "Several instances").
 */
export function disabledKeysRefused(
  attempts: readonly Attempt[],
  boundMs: number,
  excused: readonly TimeWindow[] = [],
): Violation[] {
  return attemptsWithDisabledKeys(attempts, boundMs, excused)
    .judged.filter((attempt) => attempt.succeeded)
    .map((attempt) => ({
      check: 'disabled_key_refused',
      subject: attempt.keyId ?? '?',
      detail: `${attempt.kind} succeeded ${attempt.disabledFor} ms after the key was disabled`,
    }));
}
