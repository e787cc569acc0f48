import type { H3Quote, H3Task } from '@tollgate/protocol';
import type { Kysely } from 'kysely';
import type { Principal } from '../auth/key-service.js';
import {
  offeredResolutions,
  quoteH3Understand,
  quoteH3Video,
  type H3Pricing,
} from '../billing/h3-pricing.js';
import type { PriceBook, PriceEntry } from '../billing/price-book.js';
import type { Quote } from '../billing/task-pricing.js';
import type { ModelConfig } from '../config/schema.js';
import { ApiError } from '../errors/api-error.js';
import type { ModelCatalog } from '../models/model-catalog.js';
import type { Claim, RequestIdentity, RequestService } from '../requests/request-service.js';
import type { Database } from '../store/schema.js';
import { newTaskRow } from '../tasks/task-row.js';
import { taskNotFound } from '../tasks/task-reads.js';
import type { TaskStore } from '../tasks/task-store.js';
import type { TaskWorker } from '../tasks/task-worker.js';
import type { Clock, IdGenerator } from '../util/effects.js';
import { h3ClosedReasons } from './h3-closed.js';
import type { H3Request } from './h3-input.js';
import { readH3Media, type H3Media } from './h3-media.js';
import { storedH3Input, type H3StoredInput } from './h3-stored-input.js';
import { h3View } from './h3-family.js';

/** Shortest time between two refreshes of one task that ask the upstream. */
export const REFRESH_INTERVAL_MS = 2_000;

interface PricedH3 {
  readonly model: ModelConfig;
  readonly price: PriceEntry;
  readonly quote: Quote;
  readonly media: H3Media;
  readonly input: H3StoredInput;
}

/**
 * H3 tasks seen from the caller (spec 4.4, 4.5; docs/h3.md): read-only quotes bound to a digest
 * of the input, submission (the claim, the hold, the asset uses and the task row in one
 * transaction), reads by the creating key. They run on the one task engine (task-worker.ts) and
 * settle through task-settlement.ts.
 */
export class H3Service {
  constructor(
    private readonly deps: {
      db: Kysely<Database>;
      tasks: TaskStore;
      requests: RequestService;
      prices: PriceBook;
      catalog: ModelCatalog;
      clock: Clock;
      ids: IdGenerator;
      /** The task engine: a refresh runs the worker's own step on the one task. */
      worker: Pick<TaskWorker, 'refresh'>;
    },
  ) {}

  /** Prices the input: quotes read the cached price, submission the database's (every instance agrees). */
  private async price(
    principal: Principal,
    request: H3Request,
    freshness: 'cached' | 'uncached',
  ): Promise<PricedH3> {
    const model = this.deps.catalog.resolve(principal, request.model, 'h3');
    const media = await readH3Media(this.deps.db, principal, request);
    const price =
      freshness === 'cached'
        ? await this.deps.prices.currentFor(model.id)
        : await this.deps.prices.currentUncached(model.id);
    const closed = h3ClosedReasons(model, request, media);
    const defaults = {
      resolution: request.action === 'regenerate' ? '2K' : offeredResolutions(price.prices)[0],
    };
    const draft = storedH3Input(model, request, media, defaults);
    const pricing: H3Pricing =
      draft.action === 'understand'
        ? {
            action: 'understand',
            maxInputTokens:
              Buffer.byteLength(draft.prompt ?? '', 'utf8') + model.video_input_tokens,
            maxOutputTokens: model.max_output_tokens,
          }
        : {
            action: draft.action,
            resolution: draft.resolution ?? '',
            generateAudio: draft.generateAudio,
            duration: draft.duration,
            referenceImages: media.referenceImages,
            inputAudioMs: media.inputAudioMs,
            inputVideoMs: media.inputVideoMs,
          };
    const quote =
      pricing.action === 'understand'
        ? quoteH3Understand(price.prices, pricing)
        : quoteH3Video(model, price.prices, pricing, closed);
    const reasons = [...new Set([...closed, ...quote.closedReasons])];
    return {
      model,
      price,
      media,
      quote: {
        ...quote,
        closedReasons: reasons,
        quotedAmount: reasons.length === 0 ? quote.quotedAmount : null,
      },
      input: { ...draft, pricing },
    };
  }

  /** `"operation":"quote"`: read-only, nothing recorded, held or created. */
  async quote(principal: Principal, request: H3Request): Promise<H3Quote> {
    const { model, price, quote } = await this.price(principal, request, 'cached');
    return {
      object: 'h3.quote',
      model: model.id,
      action: request.action,
      input_digest: request.digest,
      price_version: price.priceVersion,
      quoted_amount: quote.quotedAmount,
      currency: 'CNY_MICRO',
      line_items: quote.lineItems,
      closed_reasons: quote.closedReasons,
    };
  }

  /**
   * `"operation":"submit"`: the input must be the one quoted (its digest), open, and priced as
   * echoed; then the quoted amount is held and the task created with the claim (402: nothing
   * created). Refusals change nothing; a replay answers from the record.
   */
  async submit(identity: RequestIdentity, request: H3Request): Promise<Claim> {
    const expected = request.expected;
    if (expected === undefined) throw new Error('submit is parsed with its expectations');
    // The input's own rules (400, 404) first, then the echo: digest, openness, price, amount.
    const { model, price, quote, media, input } = await this.price(
      identity.principal,
      request,
      'uncached',
    );
    if (expected.digest !== request.digest)
      throw new ApiError(
        'INPUT_DIGEST_MISMATCH',
        `expected_input_digest is not the digest of this input (${request.digest}): submit the input exactly as quoted, or quote again`,
        'expected_input_digest',
      );
    if (quote.quotedAmount === null)
      throw new ApiError(
        'UNSUPPORTED_CAPABILITY',
        `this combination is not open: ${quote.closedReasons.join('; ')}`,
      );
    if (expected.priceVersion !== price.priceVersion)
      throw new ApiError(
        'PRICE_CHANGED',
        `the price changed: expected_price_version ${expected.priceVersion.slice(0, 100)} is not the current ${price.priceVersion}; quote again`,
        'expected_price_version',
      );
    if (expected.quoteAmount !== quote.quotedAmount)
      throw new ApiError(
        'QUOTE_MISMATCH',
        `expected_quote_amount ${expected.quoteAmount} is not the quote of this input at ${price.priceVersion} (${quote.quotedAmount} micro-yuan): echo the quote's quoted_amount, never an amount of your own or another mode's`,
        'expected_quote_amount',
      );
    const quotedAmount = quote.quotedAmount;
    const taskId = this.deps.ids.uuid();
    return this.deps.requests.claim(
      identity,
      { amount: quotedAmount, priceVersion: price.priceVersion },
      media.assetIds,
      async (trx, holdId) => {
        if (holdId === null) throw new Error('a task is always held');
        const row = newTaskRow({
          id: taskId,
          kind: 'h3',
          identity,
          model,
          input,
          quotedAmount,
          priceVersion: price.priceVersion,
          lineItems: quote.lineItems,
          holdId,
          now: this.deps.clock.now(),
        });
        await this.deps.tasks.insert(trx, row);
        return { status: 202, body: h3View(row), taskId };
      },
    );
  }

  /** The stored task, by its creating key only (everyone else: the 404 of a missing id). */
  async read(principal: Principal, id: string): Promise<H3Task> {
    return h3View(await this.owned(principal, id));
  }

  /**
   * `?refresh=true`: asks the upstream for an accepted (`running`) task's state first, through
   * the worker's own step (a poll: never a submission), then reads it. At most once per
   * `REFRESH_INTERVAL_MS` per task (429 with `Retry-After` within it); a task in any other state,
   * or held by a worker at this moment, is read as stored.
   */
  async refresh(principal: Principal, id: string): Promise<H3Task> {
    await this.owned(principal, id);
    const outcome = await this.deps.worker.refresh(id, REFRESH_INTERVAL_MS);
    if ('refused' in outcome && outcome.refused === 'throttled')
      throw new ApiError(
        'RATE_LIMITED',
        `task ${id} was refreshed less than ${REFRESH_INTERVAL_MS / 1000} s ago: read it without refresh, or refresh after Retry-After`,
        'refresh',
        { 'retry-after': String(Math.max(1, Math.ceil(outcome.retryAfterMs / 1000))) },
      );
    return this.read(principal, id);
  }

  async owned(principal: Principal, id: string) {
    const row = await this.deps.tasks.ownedBy(id, { keyId: principal.keyId, kind: 'h3' });
    if (row === undefined) throw taskNotFound();
    return row;
  }
}
