import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { captureHold, releaseHold } from '../billing/ledger.js';
import { type LedgerEffects } from '../billing/journal.js';
import type { ModelConfig, TokenPrices } from '../config/schema.js';
import type { RequestLookupAnswer } from '../providers/request-lookup.js';
import { channelsOf } from '../routing/channels.js';
import type { Database } from '../store/schema.js';
import { LOOKED_UP_PATHS, priceLookedUpUsage, type UsagePrice } from './looked-up-usage.js';
import type { RecordRow } from './record-view.js';
import type { RequestStore } from './request-store.js';

/** An upstream's request look-up (providers/request-lookup.ts); `undefined` without the capability. */
export type LookupOf = (
  upstream: string,
) => ((requestId: string) => Promise<RequestLookupAnswer>) | undefined;

export interface ReconcilerDeps {
  readonly db: Kysely<Database>;
  readonly effects: LedgerEffects;
  readonly records: RequestStore;
  readonly prices: {
    byVersion(priceVersion: string): Promise<{ prices: TokenPrices } | undefined>;
  };
  readonly models: readonly ModelConfig[];
  readonly lookupOf: LookupOf;
  readonly logger: Pick<Logger, 'info' | 'warn'>;
}

export interface ReconcilerOptions {
  /**
   * How old (since its creation) a record must be before "not done" is believed: a call still on
   * its way must not be judged (default: the sweeper's stale age, maintenance/sweeper.ts).
   */
  readonly graceMs: number;
  /**
   * How long an upstream's look-up must keep answering "never received" (404) before it is
   * believed, from its first such answer (`upstreams.<name>.not_received_after_ms`; default
   * `notReceivedAfterMsOf`, config/schema.ts).
   */
  readonly notReceivedAfterMs: (upstream: string) => number;
  /** First wait after a failed look-up; doubled on each further failure, at most `maxBackoffMs`. */
  readonly backoffMs?: number;
  readonly maxBackoffMs?: number;
  /** Records looked at per pass, oldest first. */
  readonly batch?: number;
}

/** What one pass did (logged by the sweeper; tests read it). */
export interface ReconcileCounts {
  captured: number;
  released: number;
  /** Looked up and left: still in progress, too young, or a look-up failed (backoff). */
  left: number;
}

type Verdict =
  | { kind: 'completed'; usage: unknown; upstream: string }
  /** Every upstream refused it (`failed`) or never received it (`notReceivedBy`: 404). */
  | { kind: 'not_done'; upstreams: string[]; notReceivedBy: string[] }
  | { kind: 'in_progress' }
  | { kind: 'unaskable' }
  | { kind: 'error'; error: unknown };

/**
 * Resolves `submission_unknown` text records (chat, embeddings, rerank) by asking the upstreams
 * that can be asked (`request_lookup`) what became of the call the record names: done → its
 * usage priced on the record's price version, captured (never above the hold), record
 * `succeeded`; never received, or refused, by every upstream the model routes to, once the
 * record is older than the grace period and every "never received" has been answered for that
 * upstream's `not_received_after_ms` since its first such answer → hold released, record
 * `failed`; a look-up that fails → tried again later, with backoff (it neither starts nor ends
 * that window); any upstream without the capability, or a usage it cannot price → left for the
 * operator's queue. Every resolution is one transaction: the hold moves out
 * of `open` once (guarded) and the record moves from `submission_unknown` once (guarded), so
 * several instances reconciling at once, a late finish or an operator resolve a record once —
 * whoever comes second rolls back. The resolver is written where an operator's is:
 * `resolution.by = 'lookup'`. Look-ups are read-only, so a record looked up twice costs nothing.
 */
export class RequestReconciler {
  /** Records whose look-up failed: when to try again (this instance only; lost on restart). */
  private readonly retries = new Map<string, { failures: number; at: number }>();
  /**
   * Records whose look-up answered "never received": when it first did, in a row of such answers
   * (this instance only: lost on restart, which only starts the window again).
   */
  private readonly notReceivedSince = new Map<string, number>();
  private readonly modelsById: ReadonlyMap<string, ModelConfig>;

  constructor(
    private readonly deps: ReconcilerDeps,
    private readonly options: ReconcilerOptions,
  ) {
    this.modelsById = new Map(deps.models.map((model) => [model.id, model]));
  }

  /** Whether any upstream can be asked: without one, there is nothing to do. */
  get enabled(): boolean {
    const upstreams = new Set(
      this.deps.models.flatMap((model) => channelsOf(model).map((channel) => channel.upstream)),
    );
    return [...upstreams].some((upstream) => this.deps.lookupOf(upstream) !== undefined);
  }

  async reconcile(): Promise<ReconcileCounts> {
    const counts: ReconcileCounts = { captured: 0, released: 0, left: 0 };
    if (!this.enabled) return counts;
    const now = this.deps.effects.clock.now();
    const rows = await this.deps.records.awaitingLookup(LOOKED_UP_PATHS, this.options.batch ?? 100);
    const listed = new Set(rows.map((row) => row.id));
    // Resolved elsewhere (an operator, another instance): forget their backoff.
    for (const id of this.retries.keys()) if (!listed.has(id)) this.retries.delete(id);
    for (const id of this.notReceivedSince.keys())
      if (!listed.has(id)) this.notReceivedSince.delete(id);
    for (const row of rows) {
      const retry = this.retries.get(row.id);
      if (retry !== undefined && retry.at > now) continue;
      const upstreams = this.upstreamsOf(row);
      if (upstreams === undefined) continue;
      const verdict = await this.ask(row.id, upstreams);
      if (verdict.kind === 'error') {
        this.backOff(row.id, now, verdict.error);
        counts.left += 1;
        continue;
      }
      this.retries.delete(row.id);
      if (verdict.kind === 'completed') {
        this.notReceivedSince.delete(row.id);
        if (await this.capture(row, verdict)) counts.captured += 1;
        else counts.left += 1;
      } else if (verdict.kind === 'not_done' && this.believed(row, verdict.notReceivedBy, now)) {
        if (await this.release(row, verdict.upstreams)) counts.released += 1;
        else counts.left += 1;
      } else {
        if (verdict.kind !== 'not_done') this.notReceivedSince.delete(row.id);
        if (verdict.kind !== 'unaskable') counts.left += 1;
      }
    }
    return counts;
  }

  /**
   * Whether "not done" is believed now: the record is past the grace period, and every upstream
   * that answered "never received" has answered so for its window. The window runs from the
   * first such answer: the record was `submission_unknown` by then, so no send of it could start
   * later, and a send started before has reached the upstream (and shows in its look-up) or been
   * given up within the upstream's timeouts, which the window exceeds (config/schema.ts).
   */
  private believed(row: RecordRow, notReceivedBy: readonly string[], now: number): boolean {
    if (notReceivedBy.length === 0) return now - row.created_at >= this.options.graceMs;
    const since = this.notReceivedSince.get(row.id) ?? now;
    this.notReceivedSince.set(row.id, since);
    const window = Math.max(
      ...notReceivedBy.map((upstream) => this.options.notReceivedAfterMs(upstream)),
    );
    return now - row.created_at >= this.options.graceMs && now - since >= window;
  }

  /** The distinct upstreams the record's model routes to; `undefined` for a model no longer configured. */
  private upstreamsOf(row: RecordRow): string[] | undefined {
    const model = row.model === null ? undefined : this.modelsById.get(row.model);
    if (model === undefined) return undefined;
    return [...new Set(channelsOf(model).map((channel) => channel.upstream))];
  }

  /**
   * Asks every upstream the call may have gone to (a retry on another channel sends the same
   * id): one that did the work decides; "not done" needs every one of them to say so.
   */
  private async ask(requestId: string, upstreams: readonly string[]): Promise<Verdict> {
    let unaskable = false;
    let inProgress = false;
    let failure: unknown;
    const notReceivedBy: string[] = [];
    for (const upstream of upstreams) {
      const lookup = this.deps.lookupOf(upstream);
      if (lookup === undefined) {
        unaskable = true;
        continue;
      }
      let answer: RequestLookupAnswer;
      try {
        answer = await lookup(requestId);
      } catch (error) {
        failure = error ?? new Error('look-up failed');
        continue;
      }
      if (answer.status === 'completed')
        return { kind: 'completed', usage: answer.usage, upstream };
      if (answer.status === 'in_progress') inProgress = true;
      if (answer.status === 'not_received') notReceivedBy.push(upstream);
    }
    if (failure !== undefined) return { kind: 'error', error: failure };
    if (unaskable) return { kind: 'unaskable' };
    if (inProgress) return { kind: 'in_progress' };
    return { kind: 'not_done', upstreams: [...upstreams], notReceivedBy };
  }

  private backOff(requestId: string, now: number, error: unknown): void {
    const failures = (this.retries.get(requestId)?.failures ?? 0) + 1;
    const first = this.options.backoffMs ?? 60_000;
    const wait = Math.min(first * 2 ** (failures - 1), this.options.maxBackoffMs ?? 3_600_000);
    this.retries.set(requestId, { failures, at: now + wait });
    this.deps.logger.warn(
      { requestId, err: error, failures, retryInMs: wait },
      'request look-up failed; tried again later',
    );
  }

  /** The upstream did the work: capture its usage's price, at most the hold. */
  private async capture(
    row: RecordRow,
    found: { usage: unknown; upstream: string },
  ): Promise<boolean> {
    const price = await this.priceOf(row, found.usage);
    if (price === undefined || row.hold_id === null) {
      this.deps.logger.warn(
        { requestId: row.id, upstream: found.upstream, usage: found.usage },
        'request look-up found the call done but its usage cannot be priced; left for an operator',
      );
      return false;
    }
    const held = row.reserve_amount ?? 0;
    const amount = Math.min(price.amount, held);
    const capped = amount < price.amount;
    const reason = capped
      ? `upstream ${found.upstream} reports it done (look-up); its usage prices at ${price.amount}, above the hold: the hold ${held} is charged`
      : `upstream ${found.upstream} reports it done (look-up)`;
    const holdId = row.hold_id;
    const now = this.deps.effects.clock.now();
    return this.resolveOnce(row.id, async (trx) => {
      const result = await captureHold(trx, this.deps.effects, {
        holdId,
        amount,
        reason: `lookup: usage of ${row.id}`,
      });
      if (result !== 'captured') return false;
      return this.deps.records.transition(trx, row.id, 'submission_unknown', 'succeeded', {
        usage: JSON.stringify(price.usage),
        amount,
        pricing_rule: capped
          ? `${price.rule}; capped at the hold: ${amount} micro-yuan`
          : price.rule,
        usage_flag: capped
          ? `usage_exceeded_cap: priced ${price.amount} above the hold ${held}`
          : null,
        // Capped, the amount is not their sum: the rule says how it was reached instead.
        line_items: capped ? null : JSON.stringify(price.lineItems),
        resolution: resolutionOf('capture', amount, reason, now),
        updated_at: now,
      });
    });
  }

  /** No upstream did the work (never received, or refused): release the whole hold. */
  private async release(row: RecordRow, upstreams: readonly string[]): Promise<boolean> {
    if (row.hold_id === null) return false;
    const holdId = row.hold_id;
    const now = this.deps.effects.clock.now();
    const reason = `upstream ${upstreams.join(', ')} never did it (look-up)`;
    return this.resolveOnce(row.id, async (trx) => {
      if (!(await releaseHold(trx, this.deps.effects, { holdId, reason: `lookup: ${reason}` })))
        return false;
      return this.deps.records.transition(trx, row.id, 'submission_unknown', 'failed', {
        resolution: resolutionOf('release', 0, reason, now),
        updated_at: now,
      });
    });
  }

  /**
   * Runs one resolution's transaction; `false` from it (someone else resolved the hold or moved
   * the record first) rolls the whole transaction back.
   */
  private async resolveOnce(
    requestId: string,
    work: (trx: Kysely<Database>) => Promise<boolean>,
  ): Promise<boolean> {
    try {
      await this.deps.db.transaction().execute(async (trx) => {
        await this.deps.records.applyPending(trx, requestId);
        if (!(await work(trx))) throw new ResolvedElsewhere();
      });
      return true;
    } catch (error) {
      if (error instanceof ResolvedElsewhere) return false;
      throw error;
    }
  }

  private async priceOf(row: RecordRow, usage: unknown): Promise<UsagePrice | undefined> {
    if (row.price_version === null) return undefined;
    const entry = await this.deps.prices.byVersion(row.price_version);
    if (entry === undefined) return undefined;
    return priceLookedUpUsage(row.path, usage, entry.prices);
  }
}

/** Thrown inside a resolution's transaction to roll it back: resolved by someone else first. */
class ResolvedElsewhere extends Error {
  constructor() {
    super('resolved elsewhere meanwhile');
  }
}

function resolutionOf(
  action: 'capture' | 'release',
  amount: number,
  reason: string,
  now: number,
): string {
  return JSON.stringify({ action, amount, reason, by: 'lookup', at: new Date(now).toISOString() });
}
