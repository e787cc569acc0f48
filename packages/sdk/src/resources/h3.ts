import {
  H3_SETTLE_CONFIRMATION,
  type H3Action,
  type H3Quote,
  type H3Role,
  type H3SettleBody,
  type H3Task,
} from '@tollgate/protocol';
import type { Transport } from '../http.js';
import { TollgateError } from '../errors.js';
import { QuoteClosedError } from '../task-errors.js';
import type { CallOptions } from '../types.js';
import { download, type Content, type ContentOptions } from './content.js';
import { businessOptions, callOptions, segment } from './shared.js';
import { gatewayPath, settlementPath, type TaskPostOptions } from './tasks.js';

/** An H3 input (spec 4.4): the same for the quote and the submit. */
export interface H3Input {
  model: string;
  action: H3Action;
  /** Not sent when regenerating from a source task. */
  prompt?: string;
  parameters?: {
    resolution?: string;
    ratio?: string;
    duration?: number;
    generate_audio?: boolean;
    watermark?: boolean;
  };
  /** The caller's own assets; remote URLs are not sent. */
  referenceAssets?: { asset_id: string; source: 'asset'; role: H3Role }[];
  /** The caller's own succeeded video task (regenerate, understand). */
  source_task_id?: string;
}

/** H3 tasks (spec 2.6, 4.4, 4.5; docs/h3.md): `POST /v1/h3/tasks` with `operation` quote or submit. */
export class H3 {
  constructor(private readonly transport: Transport) {}

  /** Quotes the input (read-only; sent with an Idempotency-Key like every business POST). */
  async quote(input: H3Input, options: TaskPostOptions = {}): Promise<H3Quote> {
    const { data } = await this.transport.json<H3Quote>({
      method: 'POST',
      path: '/h3/tasks',
      json: { ...input, operation: 'quote' },
      ...businessOptions(options, options.jobKey),
    });
    return data;
  }

  /**
   * Submits the identical input with the quote echoed (`expected_input_digest`,
   * `expected_price_version`, `expected_quote_amount`); the quoted amount is held. Refused
   * without sending (`QuoteClosedError`) when the quote has `closed_reasons` or no confirmed
   * amount (spec 4.4). A failure after sending is `OutcomeUnknownError`: recover, never resend.
   */
  async submit(input: H3Input, quote: H3Quote, options: TaskPostOptions = {}): Promise<H3Task> {
    const amount = quote.quoted_amount;
    if (
      quote.closed_reasons.length > 0 ||
      amount === null ||
      !Number.isSafeInteger(amount) ||
      amount <= 0
    )
      throw new QuoteClosedError(quote.closed_reasons);
    const { data, answer } = await this.transport.json<H3Task>({
      method: 'POST',
      path: '/h3/tasks',
      json: {
        ...input,
        operation: 'submit',
        expected_input_digest: quote.input_digest,
        expected_price_version: quote.price_version,
        expected_quote_amount: amount,
      },
      ...businessOptions(options, options.jobKey),
    });
    if (answer.idempotencyKey !== undefined) {
      const entry = await this.transport.journal.read(answer.idempotencyKey);
      if (entry?.kind === 'request') await this.transport.update(entry, { taskId: data.id });
    }
    return data;
  }

  /**
   * `GET /v1/h3/tasks/{id}`: the stored state; with `refresh: true` the gateway first asks the
   * upstream about an accepted task (at most every 2 s per task, else `RateLimitError`).
   */
  async get(id: string, options: CallOptions & { refresh?: boolean } = {}): Promise<H3Task> {
    const { data } = await this.transport.json<H3Task>({
      method: 'GET',
      path: `/h3/tasks/${segment(id)}`,
      ...(options.refresh === true ? { query: { refresh: 'true' } } : {}),
      ...callOptions(options),
    });
    return data;
  }

  /**
   * Settles with the exact body of spec 4.5 (`confirmation: settle_original_h3`) and the task's
   * own billing values, at its settlement URL; given an id, the task is read first. Nothing is
   * sent unless the task offers a settlement with `billing.settlement_pending` true.
   */
  async settle(task: H3Task | string, options: TaskPostOptions = {}): Promise<H3Task> {
    const read = typeof task === 'string' ? await this.get(task, options) : task;
    const path = settlementPath(read, `/v1/h3/tasks/${read.id}/settle`);
    const body: H3SettleBody = {
      actual_amount: read.billing.actual_amount as number,
      price_version: read.billing.price_version,
      confirmation: H3_SETTLE_CONFIRMATION,
    };
    const { data } = await this.transport.json<H3Task>({
      method: 'POST',
      path,
      json: body,
      ...businessOptions(options, options.jobKey),
    });
    return data;
  }

  /** The delivered video of a settled video task (its `content_path`), whole or a byte range. */
  content(task: H3Task, options: ContentOptions = {}): Promise<Content> {
    if (task.content_path === undefined)
      throw new TollgateError(`task ${task.id} has no content_path: not a delivered video`);
    return download(this.transport, gatewayPath(task.content_path), options);
  }
}
