import {
  SETTLE_CONFIRMATION,
  type H3Task,
  type Quote,
  type SettleBody,
  type Task,
} from '@tollgate/protocol';
import type { Transport } from '../http.js';
import { TaskNotSettleableError } from '../task-errors.js';
import type { CallOptions, PostOptions } from '../types.js';
import { download, type Content, type ContentOptions } from './content.js';
import { businessOptions, callOptions, segment } from './shared.js';

/** `POST /v1/images/generations` and its quote (OpenAI Images fields plus `assetIds`). */
export interface ImageInput {
  model: string;
  prompt: string;
  n?: number;
  size?: string;
  quality?: string;
  /** The caller's own delivered images, as references. */
  assetIds?: string[];
}

/** `POST /v1/videos` and its quote (OpenAI Videos fields plus audio and `assetIds`). */
export interface VideoInput {
  model: string;
  prompt: string;
  /** Whole seconds, as an integer or OpenAI's string (`"4"`). */
  seconds?: number | string;
  size?: string;
  generate_audio?: boolean;
  assetIds?: string[];
}

/** The quote echoed at creation: a price changed meanwhile is refused (409), never charged. */
export interface QuoteEcho {
  expected_price_version?: string;
  expected_quote_amount?: number;
}

/** Job options of the task methods: a `generate` step's journal link. */
export interface TaskPostOptions extends PostOptions {
  /** The `generate` job this call is a step of (journaled with the request). */
  jobKey?: string;
}

/**
 * Image and video tasks (docs/tasks.md): read-only quote, creation (the quoted amount is held),
 * reads by the creating key, settlement with the exact body of spec 4.3.
 */
export class TaskResource<Input extends ImageInput | VideoInput> {
  constructor(
    protected readonly transport: Transport,
    /** `images` or `videos`. */
    readonly family: 'images' | 'videos',
  ) {}

  /** `POST /v1/{images|videos}/quote`: read-only; nothing is recorded, held or created. */
  async quote(input: Input, options: TaskPostOptions = {}): Promise<Quote> {
    const { data } = await this.transport.json<Quote>({
      method: 'POST',
      path: `/${this.family}/quote`,
      json: input,
      ...businessOptions(options, options.jobKey),
    });
    return data;
  }

  /**
   * Creates the task (202); the quoted amount is held. Echo the quote (`expected_*`) to be
   * refused rather than charged a changed price. A failure after sending is
   * `OutcomeUnknownError`: recover by its idempotency key (the record has `task_id`).
   */
  async create(input: Input & QuoteEcho, options: TaskPostOptions = {}): Promise<Task> {
    const { data, answer } = await this.transport.json<Task>({
      method: 'POST',
      path: this.family === 'images' ? '/images/generations' : '/videos',
      json: input,
      ...businessOptions(options, options.jobKey),
    });
    if (answer.idempotencyKey !== undefined) {
      const entry = await this.transport.journal.read(answer.idempotencyKey);
      if (entry?.kind === 'request') await this.transport.update(entry, { taskId: data.id });
    }
    return data;
  }

  /** `GET /v1/{images|videos}/{id}` with the creating key. */
  async get(id: string, options: CallOptions = {}): Promise<Task> {
    const { data } = await this.transport.json<Task>({
      method: 'GET',
      path: `/${this.family}/${segment(id)}`,
      ...callOptions(options),
    });
    return data;
  }

  /**
   * Settles the task with the exact body of spec 4.3 — its own `billing.actual_amount` and
   * `billing.price_version`, `confirmation: settle_original_approved` — at its
   * `settlement.url`. Given an id, the task is read first. Unless the task offers a settlement
   * and `billing.settlement_pending` is true, nothing is sent (`TaskNotSettleableError`).
   */
  async settle(task: Task | string, options: TaskPostOptions = {}): Promise<Task> {
    const read = typeof task === 'string' ? await this.get(task, options) : task;
    const path = settlementPath(read, `/v1/${this.family}/${read.id}/settle`);
    const body: SettleBody = {
      actual_amount: read.billing.actual_amount as number,
      price_version: read.billing.price_version,
      confirmation: SETTLE_CONFIRMATION,
    };
    const { data } = await this.transport.json<Task>({
      method: 'POST',
      path,
      json: body,
      ...businessOptions(options, options.jobKey),
    });
    return data;
  }

  /** Reads a delivered output (`outputs[].content_url`), whole or a byte range. */
  content(output: { content_url: string }, options: ContentOptions = {}): Promise<Content> {
    return download(this.transport, gatewayPath(output.content_url), options);
  }
}

/** Video tasks: image-task methods plus the delivered video's content. */
export class Videos extends TaskResource<VideoInput> {
  constructor(transport: Transport) {
    super(transport, 'videos');
  }

  /** `GET /v1/videos/{id}/content` (creating key; after settlement), whole or a byte range. */
  videoContent(id: string, options: ContentOptions = {}): Promise<Content> {
    return download(this.transport, `/videos/${segment(id)}/content`, options);
  }
}

/**
 * The settlement path of a task read, checked: only while `settlement` is offered and
 * `billing.settlement_pending` is true with an `actual_amount`, and only the task's own settle
 * path (a URL from a body never sends the key anywhere else).
 */
export function settlementPath(task: Task | H3Task, expected: string): string {
  if (task.settlement === undefined)
    throw new TaskNotSettleableError(task, 'no settlement offered');
  if (!task.billing.settlement_pending)
    throw new TaskNotSettleableError(task, `billing is ${task.billing.state}, not pending`);
  if (task.billing.actual_amount === undefined)
    throw new TaskNotSettleableError(task, 'no billing.actual_amount');
  if (gatewayPath(task.settlement.url) !== expected)
    throw new TaskNotSettleableError(task, `unexpected settlement url ${task.settlement.url}`);
  return expected;
}

/** A host-relative gateway path from a body (`/v1/…`); anything else is refused. */
export function gatewayPath(url: string): string {
  if (!url.startsWith('/v1/') || url.includes('..') || url.includes('//'))
    throw new TypeError(`not a gateway path: ${url}`);
  return url;
}
