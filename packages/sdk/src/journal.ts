import { mkdir, open, readFile, stat } from 'node:fs/promises';
import path from 'node:path';

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

/**
 * A journal in a JSON-lines file, for scripts that must resume after a crash: each write
 * appends one line (opened with `O_APPEND`, written whole, closed) and resolves once the
 * operating system has it; with `fsync: true` it also survives a power loss. The latest line
 * of a key wins. Lines appended by another `FileJournal` on the same file (another process)
 * are picked up on the next read. A torn last line (a crash mid-write) is ignored. The file
 * only grows; start a new file to compact it.
 */
export class FileJournal implements RequestJournal {
  private readonly byKey = new Map<string, JournalEntry>();
  /** Bytes of the file already applied to `byKey`. */
  private offset = 0;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly file: string,
    private readonly options: { fsync?: boolean } = {},
  ) {}

  write(entry: JournalEntry): Promise<void> {
    // Writes are serialised so that lines never interleave within this process.
    const done = this.queue.then(() => this.append(entry));
    this.queue = done.catch(() => undefined);
    return done;
  }

  async read(key: string): Promise<JournalEntry | undefined> {
    await this.catchUp();
    return this.byKey.get(key);
  }

  async entries(): Promise<JournalEntry[]> {
    await this.catchUp();
    return [...this.byKey.values()];
  }

  private async append(entry: JournalEntry): Promise<void> {
    await mkdir(path.dirname(this.file), { recursive: true });
    const handle = await open(this.file, 'a+');
    try {
      // A line torn by a crash must not swallow this one: start on a fresh line.
      const { size } = await handle.stat();
      const last = Buffer.alloc(1);
      if (size > 0) await handle.read(last, 0, 1, size - 1);
      const separator = size > 0 && last[0] !== 0x0a ? '\n' : '';
      await handle.write(`${separator}${JSON.stringify(entry)}\n`);
      if (this.options.fsync === true) await handle.datasync();
    } finally {
      await handle.close();
    }
    this.byKey.set(entry.key, entry);
  }

  /** Applies whatever was appended to the file since the last read (by anyone). */
  private async catchUp(): Promise<void> {
    const size = await stat(this.file).then(
      (stats) => stats.size,
      () => 0,
    );
    if (size <= this.offset) return;
    const content = (await readFile(this.file)).subarray(this.offset);
    const end = content.lastIndexOf(0x0a);
    if (end < 0) return;
    for (const line of content.subarray(0, end).toString('utf8').split('\n')) {
      const entry = parseLine(line);
      if (entry !== undefined) this.byKey.set(entry.key, entry);
    }
    this.offset += end + 1;
  }
}

function parseLine(line: string): JournalEntry | undefined {
  if (line.trim() === '') return undefined;
  try {
    const value = JSON.parse(line) as Partial<JournalEntry>;
    return typeof value.key === 'string' && (value.kind === 'request' || value.kind === 'job')
      ? (value as JournalEntry)
      : undefined;
  } catch {
    return undefined; // a torn line
  }
}
