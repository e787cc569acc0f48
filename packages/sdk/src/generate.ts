import { sha256 } from './digest.js';
import type { H3Task, Task } from '@tollgate/protocol';
import { APIError, InternalServerError, NotFoundError, TollgateError } from './errors.js';
import type { DeliveredOutput, Family, JobQuote } from './families.js';
import type { JobEntry, JobStep, RequestJournal } from './journal.js';
import type { Requests } from './resources/requests.js';
import {
  MaxAmountExceededError,
  QuoteClosedError,
  TaskFailedError,
  WaitTimeoutError,
} from './task-errors.js';
import { pollUntil, type Backoff } from './wait.js';
import { RateLimitError } from './errors.js';

export interface GenerateOptions {
  /** The most this job may cost, micro-yuan: checked against the quote and the actual amount. */
  maxAmount: number;
  /**
   * Names the job in the journal. By default the job is named by its family and input, so an
   * unfinished job with the same input (a crashed run) is resumed, never created twice; give
   * distinct keys to run the same input as separate jobs.
   */
  jobKey?: string;
  /** How to wait for the task (default: 0.5 s doubling to 5 s, for at most 10 minutes). */
  wait?: Backoff;
  /** Stops the waits between reads; the job stays in the journal and can be resumed. */
  signal?: AbortSignal;
}

/** What a finished `generate` returns: the settled task and what it delivered. */
export interface Delivery<T extends Task | H3Task> {
  readonly task: T;
  /** Micro-yuan charged (`billing.settled_amount`). */
  readonly amount: number;
  /** The delivered files (images, a video); empty for H3 `understand`. */
  readonly outputs: DeliveredOutput[];
  /** H3 `understand`: the answer. */
  readonly text?: string;
  /** The journal key of the job. */
  readonly jobKey: string;
}

/** Jobs in these steps are over: the same job key starts a new job. */
const FINAL_STEPS: ReadonlySet<JobStep> = new Set(['done', 'refused', 'failed']);
const WAITING = new Set(['queued', 'running', 'submission_unknown']);

export interface GenerateDeps {
  readonly journal: RequestJournal;
  readonly requests: Requests;
  readonly newIdempotencyKey: () => string;
}

/**
 * Quote, create, wait, settle, deliver — each step journaled before it is taken, so that a
 * run that dies anywhere is finished by the next `generate` with the same input and journal:
 * - the quote must be a confirmed amount without `closed_reasons` and at most `maxAmount`,
 *   else nothing is created (`QuoteClosedError`, `MaxAmountExceededError`);
 * - the creation's Idempotency-Key is journaled before it is sent; a resumed job reads the
 *   original by that key (`GET /v1/requests?idempotency_key=`, whose record has `task_id`)
 *   instead of creating again. Only when the gateway recorded nothing for the key is the
 *   identical creation sent with the same key (the gateway creates at most one task per key);
 * - the task is read with back-off (`refresh=true` for H3) until it leaves queued/running;
 * - it is settled with the exact body only when `billing.actual_amount <= maxAmount`; above,
 *   the job stops (`MaxAmountExceededError`, the task unsettled). A settle whose answer was
 *   lost is judged by the task read: still pending means it did not capture, and it is sent
 *   again under its own journaled key, so it captures once;
 * - a failed task is reported (`TaskFailedError`), never settled by the SDK.
 */
export async function generate<Input, T extends Task | H3Task>(
  deps: GenerateDeps,
  family: Family<Input, T>,
  input: Input,
  options: GenerateOptions,
): Promise<Delivery<T>> {
  const maxAmount = options.maxAmount;
  if (!Number.isSafeInteger(maxAmount) || maxAmount <= 0)
    throw new TypeError('maxAmount must be a positive safe integer of micro-yuan');
  const inputDigest = await digestOf(input);
  const key = `job:${family.kind}:${options.jobKey ?? inputDigest}`;
  const save = async (job: JobEntry, change: Partial<JobEntry>): Promise<JobEntry> => {
    const next = { ...job, ...change, updatedAt: new Date().toISOString() };
    await deps.journal.write(next);
    return next;
  };

  const found = await deps.journal.read(key);
  // A finished job is not resumed; one that only got its quote (nothing sent that creates) is
  // quoted again.
  let job =
    found?.kind === 'job' && !FINAL_STEPS.has(found.step) && found.createKey !== undefined
      ? found
      : undefined;
  if (job !== undefined && job.inputDigest !== inputDigest)
    throw new TollgateError(`job ${key} was started with another input`);

  let task: T | undefined;
  if (job === undefined) {
    const now = new Date().toISOString();
    const fresh: JobEntry = {
      kind: 'job',
      key,
      family: family.kind,
      inputDigest,
      step: 'quoted',
      createdAt: now,
      updatedAt: now,
    };
    const quote = await family.quote(input, { jobKey: key });
    const refusal = quoteRefusal(quote.amount, quote.closedReasons, maxAmount);
    if (refusal !== undefined || quote.echo === undefined) {
      await save(fresh, { step: 'refused', note: refusal?.message ?? 'no quote' });
      throw refusal ?? new QuoteClosedError(quote.closedReasons);
    }
    job = await save(fresh, { quote: quote.echo });
    job = await save(job, { createKey: deps.newIdempotencyKey(), step: 'creating' });
    task = await create(family, input, job, save);
    job = await save(job, { step: 'created', taskId: task.id });
  } else if (job.taskId === undefined) {
    const taskId = await findCreated(deps.requests, job);
    if (taskId === undefined) {
      task = await create(family, input, job, save);
      job = await save(job, { step: 'created', taskId: task.id });
    } else job = await save(job, { step: 'created', taskId });
  }

  const taskId = job.taskId as string;
  const waited = await pollUntil(
    () => family.read(taskId, family.kind === 'h3'),
    (read) => !WAITING.has(read.status),
    options.wait ?? {},
    options.signal,
    (error) => (error instanceof RateLimitError ? (error.retryAfter ?? 2) * 1000 : undefined),
  );
  if (waited.timedOut) throw new WaitTimeoutError(waited.value, waited.waitedMs);
  task = waited.value;

  // Released (nothing delivered) or expired (not settled within its window: outputs deleted).
  if (
    task.status !== 'succeeded' ||
    task.billing.state === 'released' ||
    task.billing.state === 'expired'
  ) {
    await save(job, { step: 'failed', note: task.error?.message ?? task.status });
    throw new TaskFailedError(task);
  }
  if (task.billing.state === 'pending') {
    const actual = task.billing.actual_amount ?? Number.POSITIVE_INFINITY;
    if (actual > maxAmount) {
      await save(job, { step: 'stopped', note: `actual ${actual} above maxAmount ${maxAmount}` });
      throw new MaxAmountExceededError('bill', actual, maxAmount, task);
    }
    const settleKey = job.settleKey ?? deps.newIdempotencyKey();
    job = await save(job, { step: 'settling', settleKey });
    task = await family.settle(task, { idempotencyKey: settleKey, jobKey: key });
  }
  await save(job, { step: 'done' });
  return { task, amount: task.billing.settled_amount, jobKey: key, ...family.delivered(task) };
}

/** The unfinished `generate` jobs of a journal (crashed, stopped or still running). */
export async function pendingJobs(journal: RequestJournal): Promise<JobEntry[]> {
  return (await journal.entries()).filter(
    (entry): entry is JobEntry => entry.kind === 'job' && !FINAL_STEPS.has(entry.step),
  );
}

function quoteRefusal(
  amount: number | null,
  closedReasons: readonly string[],
  maxAmount: number,
): TollgateError | undefined {
  if (closedReasons.length > 0 || amount === null || !Number.isSafeInteger(amount) || amount <= 0)
    return new QuoteClosedError(closedReasons);
  if (amount > maxAmount) return new MaxAmountExceededError('quote', amount, maxAmount);
  return undefined;
}

/**
 * Sends the creation under the job's journaled key. A refusal (a 4xx: price changed, funds,
 * input) created nothing and ends the job; an unknown outcome leaves it `creating`, for the
 * next run to read.
 */
async function create<Input, T extends Task | H3Task>(
  family: Family<Input, T>,
  input: Input,
  job: JobEntry,
  save: (job: JobEntry, change: Partial<JobEntry>) => Promise<JobEntry>,
): Promise<T> {
  try {
    return await family.create(input, job.quote as JobQuote, {
      idempotencyKey: job.createKey as string,
      jobKey: job.key,
    });
  } catch (error) {
    if (
      error instanceof APIError &&
      !(error instanceof InternalServerError) &&
      error.code !== 'IDEMPOTENCY_IN_PROGRESS'
    )
      await save(job, { step: 'refused', note: `${error.code}: ${error.message}` });
    throw error;
  }
}

/**
 * The task a job's creation made, read from the original record by the creation's key
 * (waiting while it is still processing); `undefined` when the gateway recorded nothing.
 */
async function findCreated(requests: Requests, job: JobEntry): Promise<string | undefined> {
  try {
    const record = await requests.recover(job.createKey as string, { wait: true });
    if (record.task_id !== null) return record.task_id;
    throw new TollgateError(
      `the creation of job ${job.key} is ${record.status} without a task` +
        (record.error === null ? '' : `: ${record.error.code} ${record.error.message}`),
    );
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
}

/** `sha256:` of the input's canonical JSON (keys sorted at every depth). */
function digestOf(value: unknown): Promise<string> {
  return sha256(canonicalJson(value));
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const fields = Object.entries(value)
      .filter(([, field]) => field !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${fields.map(([name, field]) => `${JSON.stringify(name)}:${canonicalJson(field)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
