import type { RequestRecord } from '@tollgate/protocol';
import type { Transport } from '../http.js';
import { SettlementNotAllowedError, WaitTimeoutError } from '../task-errors.js';
import type { CallOptions, PostOptions } from '../types.js';
import { pollUntil, type Backoff } from '../wait.js';
import { businessOptions, callOptions, segment } from './shared.js';

export interface RecoverOptions extends CallOptions {
  /**
   * Wait while the original is still `processing` (back-off between reads); without it the
   * record is returned as read, whatever its status.
   */
  wait?: boolean | Backoff;
}

/** The original request record (spec 2.2, 4.2): recovery reads and settlement after a top-up. */
export class Requests {
  constructor(private readonly transport: Transport) {}

  /** `GET /v1/requests/{id}` (only with the key that made the request). */
  async get(requestId: string, options: CallOptions = {}): Promise<RequestRecord> {
    const { data } = await this.transport.json<RequestRecord>({
      method: 'GET',
      path: `/requests/${segment(requestId)}`,
      ...callOptions(options),
    });
    return data;
  }

  /** `GET /v1/requests?idempotency_key=…`: the original when its id was not saved. */
  async getByIdempotencyKey(
    idempotencyKey: string,
    options: CallOptions = {},
  ): Promise<RequestRecord> {
    const { data } = await this.transport.json<RequestRecord>({
      method: 'GET',
      path: '/requests',
      query: { idempotency_key: idempotencyKey },
      ...callOptions(options),
    });
    return data;
  }

  /**
   * Reads the original request of an idempotency key — by its request id when the journal has
   * it, else by the key — and returns its record: `status` and, once `succeeded`, `result`
   * (the original answer). It never sends the request again. A `NotFoundError` means the
   * gateway recorded nothing for the key: the request did nothing. The journal entry is
   * updated with what the record says.
   */
  async recover(idempotencyKey: string, options: RecoverOptions = {}): Promise<RequestRecord> {
    const entry = await this.transport.journal.read(idempotencyKey);
    const requestId = entry?.kind === 'request' ? entry.requestId : undefined;
    const read = () =>
      requestId === undefined
        ? this.getByIdempotencyKey(idempotencyKey, options)
        : this.get(requestId, options);
    let record: RequestRecord;
    if (options.wait === undefined || options.wait === false) record = await read();
    else {
      const backoff = options.wait === true ? { initialMs: 200, maxMs: 2_000 } : options.wait;
      const polled = await pollUntil(
        read,
        (r) => r.status !== 'processing',
        backoff,
        options.signal,
      );
      if (polled.timedOut) throw new WaitTimeoutError(polled.value, polled.waitedMs);
      record = polled.value;
    }
    if (entry?.kind === 'request' && record.status !== 'processing')
      await this.transport.update(entry, {
        state: record.status === 'submission_unknown' ? 'unknown' : 'answered',
        requestId: record.id,
        ...(record.http_status === null ? {} : { status: record.http_status }),
        ...(record.task_id === null ? {} : { taskId: record.task_id }),
      });
    return record;
  }

  /**
   * Settles an original request awaiting funds (`POST /v1/requests/{id}/settle`, empty body),
   * after a top-up. The record is read first: unless it says `canSettle`, nothing is sent
   * (`SettlementNotAllowedError`). It regenerates nothing; still short of funds is
   * `InsufficientFundsError`. Returns the settled record (its `result` now shown).
   */
  async settle(requestId: string, options: PostOptions = {}): Promise<RequestRecord> {
    const record = await this.get(requestId, options);
    if (!record.canSettle) throw new SettlementNotAllowedError(record);
    const { data } = await this.transport.json<RequestRecord>({
      method: 'POST',
      path: `/requests/${segment(record.id)}/settle`,
      ...businessOptions(options),
    });
    return data;
  }
}
