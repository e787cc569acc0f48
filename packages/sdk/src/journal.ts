/**
 * Where a business POST is, as this client knows it:
 * - `sending`: written before the request leaves; a crash now leaves this, and only a read of
 *   the original (`requests.recover`) can say what happened;
 * - `answered`: an answer arrived (`status` says which);
 * - `not_sent`: the request certainly did not reach the gateway (connection refused);
 * - `unknown`: sent, or perhaps sent, and no answer (timeout, reset, stream cut,
 *   `submission_unknown`): recover it, never resend it.
 */
export type RequestState = 'sending' | 'answered' | 'not_sent' | 'unknown';

/** One business POST, keyed by its `Idempotency-Key`. */
export interface RequestEntry {
  readonly kind: 'request';
  /** The `Idempotency-Key` (a UUID) sent with the request. */
  readonly key: string;
  readonly method: string;
  /** Path relative to the base URL, e.g. `/videos`. */
  readonly path: string;
  /** `sha256:<hex>` of the JSON body as sent; `null` for a streamed upload. */
  readonly bodyDigest: string | null;
  readonly state: RequestState;
  /** The HTTP status, once answered. */
  readonly status?: number;
  /** `X-Service-Request-Id`, once known: recovery reads `GET /v1/requests/{id}` with it. */
  readonly requestId?: string;
  /** The task the request created, once known. */
  readonly taskId?: string;
  /** The job (`generate`) this request is a step of. */
  readonly jobKey?: string;
  /** ISO 8601. */
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** The step a high-level `generate` job has reached (generate.ts). */
export type JobStep =
  | 'quoted' // quote journaled; nothing created
  | 'creating' // the creation's Idempotency-Key journaled; it may have been sent
  | 'created' // the task id is known
  | 'settling' // the settle's Idempotency-Key journaled; it may have been sent
  | 'done' // delivered
  | 'stopped' // priced above maxAmount: not settled, the task awaits settlement
  | 'refused' // the quote or the creation was refused: nothing was created
  | 'failed'; // the task failed

/** One `images|videos|h3.generate` run, keyed by `job:<family>:<job key>`. */
export interface JobEntry {
  readonly kind: 'job';
  readonly key: string;
  readonly family: 'image' | 'video' | 'h3';
  /** `sha256:<hex>` of the canonical input: a resumed run must be given the same input. */
  readonly inputDigest: string;
  readonly step: JobStep;
  /** The quote echoed at creation (H3: with its `input_digest`). */
  readonly quote?: {
    readonly quotedAmount: number;
    readonly priceVersion: string;
    readonly inputDigest?: string;
  };
  readonly createKey?: string;
  readonly taskId?: string;
  readonly settleKey?: string;
  /** Why the job stopped, was refused or failed. */
  readonly note?: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export type JournalEntry = RequestEntry | JobEntry;

/**
 * Where the client writes what it is about to send, before it sends it. Implementations must
 * have the entry stored when `write` resolves (the request is sent only after), and must keep
 * the last write of each key. Keys: a request's idempotency key; a job's `job:…` key.
 */
export interface RequestJournal {
  write(entry: JournalEntry): Promise<void>;
  read(key: string): Promise<JournalEntry | undefined>;
  /** Every key's latest entry, in the order they were first written. */
  entries(): Promise<JournalEntry[]>;
}

/** The default journal: this process's memory. Lost with the process; use `FileJournal` for scripts. */
export class MemoryJournal implements RequestJournal {
  private readonly byKey = new Map<string, JournalEntry>();

  async write(entry: JournalEntry): Promise<void> {
    this.byKey.set(entry.key, entry);
  }

  async read(key: string): Promise<JournalEntry | undefined> {
    return this.byKey.get(key);
  }

  async entries(): Promise<JournalEntry[]> {
    return [...this.byKey.values()];
  }
}
