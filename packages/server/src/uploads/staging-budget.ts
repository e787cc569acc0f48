/**
 * How much one account may have in upload staging at a time, on this instance. Uploads are free,
 * so this is the only brake on an account filling the staging disk: every upload reserves its
 * bytes before they are written, and the reservation is released when the upload ends however
 * it ends (accepted, refused, cut off). All keys of an account share one budget.
 *
 * Per instance, in memory: with N instances an account may stage up to N times the limit in all
 * (each instance's disk still sees at most one limit per account).
 */
export interface StagingLimits {
  /** Bytes one account may have staged at once (`limits.staged_upload_bytes_per_account`). */
  readonly bytesPerAccount: number;
  /** Uploads one account may have in progress at once (`limits.concurrent_uploads_per_account`). */
  readonly uploadsPerAccount: number;
}

/** Why a reservation was refused: the account is busy (429, try later) or asks the impossible (413). */
export type StagingRefusal =
  | { readonly kind: 'busy'; readonly message: string }
  | { readonly kind: 'too_large'; readonly message: string };

interface AccountStaging {
  bytes: number;
  uploads: number;
}

export class StagingBudget {
  private readonly accounts = new Map<string, AccountStaging>();

  constructor(readonly limits: StagingLimits) {}

  /**
   * Reserves room for one upload of `bytes` (its declared Content-Length, or 0 when unknown: it
   * then grows as the bytes arrive). Never waits: either the reservation, or the refusal.
   */
  reserve(accountId: string, bytes: number): StagingReservation | StagingRefusal {
    const current = this.accounts.get(accountId) ?? { bytes: 0, uploads: 0 };
    const refusal = this.check(current, bytes, bytes);
    if (refusal !== undefined) return refusal;
    if (current.uploads >= this.limits.uploadsPerAccount)
      return {
        kind: 'busy',
        message: `this account already has ${current.uploads} uploads in progress (at most ${this.limits.uploadsPerAccount} at once)`,
      };
    current.bytes += bytes;
    current.uploads += 1;
    this.accounts.set(accountId, current);
    return new StagingReservation(this, accountId, bytes);
  }

  /** @internal Called by a reservation; `undefined` when it may grow by `extra` bytes. */
  grow(accountId: string, extra: number, total: number): StagingRefusal | undefined {
    const current = this.accounts.get(accountId);
    // Cannot happen while the reservation is held; refusing beats throwing inside a stream.
    if (current === undefined) return { kind: 'busy', message: 'this upload has already ended' };
    const refusal = this.check(current, extra, total);
    if (refusal === undefined) current.bytes += extra;
    return refusal;
  }

  /** @internal Called once by a reservation. */
  release(accountId: string, bytes: number): void {
    const current = this.accounts.get(accountId);
    if (current === undefined) return;
    current.bytes -= bytes;
    current.uploads -= 1;
    if (current.uploads <= 0) this.accounts.delete(accountId);
  }

  /** `total` is the upload's own size; `extra` what it adds to the account now. */
  private check(current: AccountStaging, extra: number, total: number): StagingRefusal | undefined {
    if (total > this.limits.bytesPerAccount)
      return {
        kind: 'too_large',
        message: `the upload is larger than the ${this.limits.bytesPerAccount} bytes one account may stage at once`,
      };
    if (current.bytes + extra > this.limits.bytesPerAccount)
      return {
        kind: 'busy',
        message: `this account's uploads in progress already hold ${current.bytes} of its ${this.limits.bytesPerAccount} staging bytes`,
      };
    return undefined;
  }
}

/** One upload's share of its account's staging budget. */
export class StagingReservation {
  private released = false;

  constructor(
    private readonly budget: StagingBudget,
    private readonly accountId: string,
    private bytes: number,
  ) {}

  /** Makes the reservation cover `total` bytes (it never shrinks); the refusal if it cannot. */
  cover(total: number): StagingRefusal | undefined {
    // Never throws: it runs inside a stream's transform, where a throw would escape.
    if (this.released) return { kind: 'busy', message: 'this upload has already ended' };
    if (total <= this.bytes) return undefined;
    const refusal = this.budget.grow(this.accountId, total - this.bytes, total);
    if (refusal === undefined) this.bytes = total;
    return refusal;
  }

  /** Gives the bytes back; safe to call more than once (only the first call counts). */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.budget.release(this.accountId, this.bytes);
  }
}
