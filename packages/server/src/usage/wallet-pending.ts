import type { Kysely } from 'kysely';
import type { RequestStatus } from '@tollgate/protocol';
import { loggedEvent, type LoggedEvent } from '../events/projector.js';
import { claimPayloadOf, outcomePayloadOf } from '../events/request-events.js';
import { foldRecord } from '../requests/record-projection.js';
import type { Database } from '../store/schema.js';

/** An open hold of a claim still in the event log, as the wallet lists holds (usage/wallet.ts). */
export interface PendingHold {
  readonly id: string;
  readonly amount: number;
  readonly since: number;
  readonly request_id: string;
  readonly model: string | null;
  readonly key_name: string | null;
  readonly key_hint: string | null;
  readonly status: RequestStatus;
}

/** What the event log changes in an account's list of open holds. */
export interface PendingHolds {
  /** Holds of claims not applied yet and still open, with their record's state. */
  readonly added: readonly PendingHold[];
  /** Requests whose hold a pending event resolved (or whose money slot is taken): not listed. */
  readonly resolved: ReadonlySet<string>;
  /** Record states a pending outcome moved an applied record to (awaiting funds, unconfirmed). */
  readonly status: ReadonlyMap<string, RequestStatus>;
}

/**
 * The account's pending events (accounting.event_log, docs/event-log.md), folded as the projector
 * will apply them (requests/record-projection.ts): the wallet's holds then add up to `held`, which
 * the events' transactions moved already. The log holds only what is not applied yet, so the
 * account's share of it is small.
 */
export async function pendingHoldsOf(
  db: Kysely<Database>,
  accountId: string,
): Promise<PendingHolds> {
  const rows = await db
    .selectFrom('events')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('seq')
    .execute();
  const resolved = new Set<string>();
  const status = new Map<string, RequestStatus>();
  const claims: { claim: LoggedEvent; events: LoggedEvent[] }[] = [];
  const byRequest = new Map<string, LoggedEvent[]>();
  for (const row of rows) {
    const event = loggedEvent(row);
    byRequest.set(event.requestId, [...(byRequest.get(event.requestId) ?? []), event]);
  }
  for (const [requestId, events] of byRequest) {
    const claim = events.find((event) => event.kind === 'claim');
    if (events.some((event) => event.kind === 'money')) resolved.add(requestId);
    else if (claim !== undefined) claims.push({ claim, events });
    else {
      const outcome = events.find((event) => event.kind === 'outcome');
      if (outcome !== undefined) status.set(requestId, outcomePayloadOf(outcome).outcome.status);
    }
  }
  const open = claims.flatMap(({ claim, events }) => {
    const record = foldRecord(undefined, events);
    const hold = claimPayloadOf(claim).hold;
    return record === undefined || hold === null || claim.amount === null
      ? []
      : [{ record, hold, amount: claim.amount, since: claim.createdAt }];
  });
  const keys =
    open.length === 0
      ? []
      : await db
          .selectFrom('api_keys')
          .select(['id', 'name', 'key_hint'])
          .where('id', 'in', [...new Set(open.map(({ record }) => record.key_id))])
          .execute();
  const keyOf = new Map(keys.map((key) => [key.id, key]));
  const added = open.map(({ record, hold, amount, since }) => ({
    id: hold.id,
    amount,
    since,
    request_id: record.id,
    model: record.model,
    key_name: keyOf.get(record.key_id)?.name ?? null,
    key_hint: keyOf.get(record.key_id)?.key_hint ?? null,
    status: record.status,
  }));
  return { added, resolved, status };
}
