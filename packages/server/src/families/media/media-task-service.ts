import type { Quote as WireQuote } from '@tollgate/protocol';
import { taskChannel } from '../../routing/channels.js';
import type { Kysely } from 'kysely';
import type { Principal } from '../../auth/key-service.js';
import type { PriceBook, PriceEntry } from '../../billing/price-book.js';
import { quoteImage, quoteVideo, type Quote } from '../../billing/task-pricing.js';
import type { ModelConfig } from '../../config/schema.js';
import { assetNotFound } from '../../assets/asset-uses.js';
import { ApiError, invalidInput } from '../../errors/api-error.js';
import type { ModelCatalog } from '../../models/model-catalog.js';
import type { Claim, RequestIdentity, RequestService } from '../../requests/request-service.js';
import type { Database } from '../../store/schema.js';
import type { TaskReads } from '../../tasks/task-reads.js';
import { newTaskRow } from '../../tasks/task-row.js';
import type { TaskRow, TaskStore } from '../../tasks/task-store.js';
import type { Clock, IdGenerator } from '../../util/effects.js';
import type { MediaKind, TaskRequest } from './media-input.js';
import { imageView, videoView, type TaskView } from './media-view.js';

/** What a quote (and a creation) priced: the model, the price version and the quote itself. */
export interface PricedTask {
  readonly model: ModelConfig;
  readonly price: PriceEntry;
  readonly quote: Quote & { readonly input: object };
}

/** What a reference image may be. */
const REFERENCE_TYPES: readonly string[] = ['image/png', 'image/jpeg', 'image/webp'];

const familyOf = (kind: MediaKind) => (kind === 'image' ? 'images' : 'videos');

/** The view of an image or video row, by its family. */
const mediaView = (kind: MediaKind, row: TaskRow) =>
  kind === 'image' ? imageView(row) : videoView(row);

/**
 * Image and video tasks seen from the caller (docs/tasks.md): read-only quotes, creation (the
 * claim, the hold, the asset uses and the task row in one transaction), and reads by the
 * creating key. The worker (task-worker.ts) does the rest; settlement is task-settlement.ts.
 */
export class TaskService {
  constructor(
    private readonly deps: {
      db: Kysely<Database>;
      tasks: TaskStore;
      reads: TaskReads;
      requests: RequestService;
      prices: PriceBook;
      catalog: ModelCatalog;
      clock: Clock;
      ids: IdGenerator;
    },
  ) {}

  /**
   * Prices a request. Quotes read the cached price; creation reads it uncached so that the
   * caller's `expected_price_version` is judged against the database on every instance.
   */
  async price(
    principal: Principal,
    request: TaskRequest,
    freshness: 'cached' | 'uncached',
  ): Promise<PricedTask> {
    const model = this.deps.catalog.resolve(principal, request.model, familyOf(request.kind));
    await this.checkReferences(principal, request.assetIds);
    const price =
      freshness === 'cached'
        ? await this.deps.prices.currentFor(model.id)
        : await this.deps.prices.currentUncached(model.id);
    const quote =
      request.kind === 'image'
        ? quoteImage(model, price.prices, {
            n: request.n,
            size: request.size,
            quality: request.quality,
            referenceImages: request.assetIds.length,
          })
        : quoteVideo(model, price.prices, {
            seconds: request.seconds,
            size: request.size,
            generateAudio: request.generateAudio,
            referenceImages: request.assetIds.length,
          });
    return { model, price, quote };
  }

  /**
   * Reference images must be the caller's own delivered images (assets are personal: a service
   * key may not name them). A missing or foreign id is the 404 of a missing asset, naming it.
   * The claim checks again, under lock, that none was deleted meanwhile.
   */
  private async checkReferences(principal: Principal, assetIds: readonly string[]): Promise<void> {
    if (assetIds.length === 0) return;
    if (principal.kind !== 'personal')
      throw new ApiError(
        'PERMISSION_DENIED',
        'reference images are personal assets: name them with a personal API key',
        'assetIds',
      );
    const rows = await this.deps.db
      .selectFrom('assets')
      .select(['id', 'account_id', 'media_type'])
      .where('id', 'in', [...assetIds])
      .where('deleted_at', 'is', null)
      .where('delivered_at', 'is not', null)
      .execute();
    const byId = new Map(rows.map((row) => [row.id, row]));
    assetIds.forEach((id, index) => {
      const row = byId.get(id);
      if (row === undefined || row.account_id !== principal.accountId)
        throw assetNotFound(id, `assetIds.${index}`);
      if (!REFERENCE_TYPES.includes(row.media_type))
        throw invalidInput(
          `assetIds.${index}`,
          `is ${row.media_type}; reference images are ${REFERENCE_TYPES.join(', ')}`,
        );
    });
  }

  /** `POST /v1/{images,videos}/quote`: read-only, nothing recorded, held or created. */
  async quote(principal: Principal, request: TaskRequest): Promise<WireQuote> {
    const { model, price, quote } = await this.price(principal, request, 'cached');
    return {
      object: 'quote' as const,
      model: model.id,
      quoted_amount: quote.closedReasons.length === 0 ? quote.quotedAmount : null,
      currency: 'CNY_MICRO' as const,
      price_version: price.priceVersion,
      line_items: quote.lineItems,
      closed_reasons: quote.closedReasons,
    };
  }

  /**
   * Creates the task: re-prices, refuses a closed combination (400), a changed price (409
   * `PRICE_CHANGED`) or an echoed amount that is not this input's quote (409 `QUOTE_MISMATCH`), then claims the idempotency key with the hold of the quoted amount and
   * writes the task row inside the same transaction (402: nothing created). Replays answer from
   * the record.
   */
  async create(identity: RequestIdentity, request: TaskRequest): Promise<Claim> {
    const priced = await this.price(identity.principal, request, 'uncached');
    const { model, price, quote } = priced;
    if (quote.closedReasons.length > 0 || quote.quotedAmount === null)
      throw new ApiError(
        'UNSUPPORTED_CAPABILITY',
        `this combination is not open: ${quote.closedReasons.join('; ')}; POST /v1/${familyOf(request.kind)}/quote shows what is`,
      );
    checkExpectations(request, price.priceVersion, quote.quotedAmount);
    const quotedAmount = quote.quotedAmount;
    const taskId = this.deps.ids.next('task');
    return this.deps.requests.claim(
      identity,
      { amount: quotedAmount, priceVersion: price.priceVersion },
      request.assetIds,
      async (trx, holdId) => {
        if (holdId === null) throw new Error('a task is always held');
        const row = newTaskRow({
          id: taskId,
          kind: request.kind,
          identity,
          model,
          input: {
            ...quote.input,
            prompt: request.prompt,
            upstreamModel: taskChannel(model).model,
            assetIds: [...request.assetIds],
          },
          quotedAmount,
          priceVersion: price.priceVersion,
          lineItems: quote.lineItems,
          holdId,
          now: this.deps.clock.now(),
        });
        await this.deps.tasks.insert(trx, row);
        return { status: 202, body: mediaView(request.kind, row), taskId };
      },
    );
  }

  /** A task read by its creating key; any other key gets the 404 of a missing id. */
  async read(principal: Principal, kind: MediaKind, id: string): Promise<TaskView> {
    return mediaView(kind, await this.deps.reads.owned(principal, kind, id));
  }
}

/**
 * The caller's echoed quote must match today's, nothing created otherwise (docs/errors.md): a
 * moved price version is `PRICE_CHANGED`; an amount that is not what this input costs at the
 * echoed (or, none echoed, today's) version is `QUOTE_MISMATCH` — the same meanings as H3's.
 */
function checkExpectations(request: TaskRequest, priceVersion: string, quotedAmount: number): void {
  const { expected } = request;
  if (expected.priceVersion !== undefined && expected.priceVersion !== priceVersion)
    throw new ApiError(
      'PRICE_CHANGED',
      `the price changed: expected_price_version ${expected.priceVersion.slice(0, 100)} is not the current ${priceVersion}; quote again`,
      'expected_price_version',
    );
  if (expected.quoteAmount !== undefined && expected.quoteAmount !== quotedAmount)
    throw new ApiError(
      'QUOTE_MISMATCH',
      `expected_quote_amount ${expected.quoteAmount} is not the quote of this input at ${priceVersion} (${quotedAmount} micro-yuan): echo the quote's quoted_amount, never an amount of your own; quote again`,
      'expected_quote_amount',
    );
}
