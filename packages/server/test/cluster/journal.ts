/**
 * What the battery's client sent and saw, one entry per attempt (a retry with the same
 * idempotency key is a second attempt). The invariant checks compare it with the database.
 */
export type OperationKind =
  'chat' | 'chat_stream' | 'embeddings' | 'video' | 'settle' | 'topup' | 'disable' | 'upload';

export interface Attempt {
  readonly kind: OperationKind;
  readonly accountId: string;
  /** The API key's id (business calls) or the disabled key's id (`disable`). */
  readonly keyId: string | undefined;
  /** The Idempotency-Key, or the top-up's reference. */
  readonly idempotencyKey: string;
  /** The upstream fault written into the prompt (`[sim:hang]`), if any. */
  readonly fault: string | undefined;
  /** Top-ups: the amount sent. Settles: the `actual_amount` sent. */
  readonly amount: number | undefined;
  /** Client clock (ms) when the attempt was sent and when its answer (or error) ended. */
  readonly sentAt: number;
  readonly endedAt: number;
  /** The HTTP status, or 0 when no answer came (connection refused or dropped). */
  readonly status: number;
  /** The answer's `X-Service-Request-Id`. */
  readonly requestId: string | undefined;
  /** A 2xx the client would act on: a whole body, or a stream that ended with `[DONE]`. */
  readonly succeeded: boolean;
  /** Token usage the answer showed (chat, embeddings). */
  readonly usage: Record<string, number> | undefined;
  /** Videos: the task id of a 202; settles: the task settled. */
  readonly taskId: string | undefined;
}

export class Journal {
  readonly attempts: Attempt[] = [];
  /** The client's samples of "some account is negative" taken during the run. */
  readonly negativeBalanceSamples: string[] = [];

  add(attempt: Attempt): void {
    this.attempts.push(attempt);
  }
}
