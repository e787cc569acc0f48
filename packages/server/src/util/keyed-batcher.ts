import { setImmediate as deferred } from 'node:timers';

/**
 * Collects work items per key (a lane: batched money uses one per instance, for all accounts)
 * and hands them to `run` in batches: the first item of an idle key starts a batch at the end
 * of the current event-loop turn (so every item whose I/O arrived in the same turn joins it),
 * and while a key's batch runs, new items wait for the next one. At most one batch per key runs
 * at a time, so batches grow with the load by themselves (as SQLite's group commit does,
 * store/sqlite-group-commit.ts); without load a batch is one item, a few microseconds later
 * than alone.
 *
 * `run` answers every item of its batch (resolves or rejects each); if it throws instead, every
 * item it was given that is still unanswered is rejected with that error.
 */
export class KeyedBatcher<Item extends BatchItem<unknown>> {
  readonly #lanes = new Map<string, Item[]>();
  readonly #running = new Set<string>();

  constructor(
    private readonly run: (key: string, batch: readonly Item[]) => Promise<void>,
    private readonly options: {
      /** The most items in one batch (bounds one statement's parameters). */
      readonly maxBatch: number;
      /**
       * Whether `item` may join a batch that already holds `taken` (e.g. not two uses of one
       * idempotency key in one batch); an item refused waits for the next batch, in order.
       */
      readonly compatible?: (item: Item, taken: readonly Item[]) => boolean;
    },
  ) {}

  /** Queues `item` under `key`; the item's own promise says how it ended. */
  add(key: string, item: Item): void {
    const lane = this.#lanes.get(key);
    if (lane === undefined) this.#lanes.set(key, [item]);
    else lane.push(item);
    if (!this.#running.has(key)) this.#schedule(key);
  }

  #schedule(key: string): void {
    this.#running.add(key);
    deferred(() => void this.#runNext(key));
  }

  async #runNext(key: string): Promise<void> {
    const lane = this.#lanes.get(key) ?? [];
    const batch: Item[] = [];
    const later: Item[] = [];
    for (const item of lane) {
      const fits =
        batch.length < this.options.maxBatch &&
        later.length === 0 &&
        (this.options.compatible?.(item, batch) ?? true);
      (fits ? batch : later).push(item);
    }
    if (later.length === 0) this.#lanes.delete(key);
    else this.#lanes.set(key, later);
    try {
      await this.run(key, batch);
    } catch (error) {
      for (const item of batch) item.reject(error);
    }
    if (this.#lanes.has(key)) this.#schedule(key);
    else this.#running.delete(key);
  }
}

/** A queued item's way back to its caller (a promise's resolve and reject). */
export interface BatchItem<Result> {
  resolve(result: Result): void;
  reject(error: unknown): void;
}
