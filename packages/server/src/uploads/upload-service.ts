import { Transform, type Readable } from 'node:stream';
import type { Principal } from '../auth/key-service.js';
import type { Config, ModelConfig } from '../config/schema.js';
import { ApiError, invalidInput } from '../errors/api-error.js';
import type { RequestService } from '../requests/request-service.js';
import type { Store } from '../store/database.js';
import type { Clock, IdGenerator } from '../util/effects.js';
import { fingerprint } from '../requests/idempotency.js';
import { assetView } from '../assets/asset-view.js';
import { placeAsset } from '../assets/placement.js';
import { TooLarge, type AssetStorage, type StagedUpload } from '../assets/local-storage.js';
import {
  normaliseLabel,
  probeFile,
  ProbeError,
  sniffPrefix,
  SNIFF_WINDOW_BYTES,
} from '../assets/probe.js';
import { checkRequirements } from '../assets/requirements.js';
import { StagingBudget, type StagingRefusal, type StagingReservation } from './staging-budget.js';
import { readPrefix } from './upload-prefix.js';

/** How long a caller refused for a busy staging budget is told to wait (`Retry-After`, s). */
export const STAGING_RETRY_AFTER_SECONDS = 5;

/** One upload, parsed from its request by the route. */
export interface UploadInput {
  readonly requestId: string;
  readonly principal: Principal;
  readonly idempotencyKey: string;
  /** The `Content-Type` the caller gave. */
  readonly label: string;
  readonly fileName: string | undefined;
  readonly modelId: string | undefined;
  readonly model: ModelConfig | undefined;
  /** `Content-Length`, when the caller declared one (not for chunked bodies). */
  readonly declaredBytes: number | undefined;
  readonly body: Readable;
  /** Aborts when the caller goes away mid-body. */
  readonly signal: AbortSignal;
}

export interface UploadAnswer {
  readonly status: number;
  readonly body: unknown;
  readonly headers: Record<string, string>;
}

/** What the upload service needs: its own list, not the HTTP layer's bag (issue 38). */
export interface UploadDeps {
  readonly config: Config;
  readonly store: Store;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly requests: RequestService;
}

/**
 * Uploads (docs/assets.md), in the order that keeps the disk safe: reserve room in the account's
 * staging budget (from the declared length), judge the first bytes (`SNIFF_WINDOW_BYTES`) before
 * writing any, stage the body (hashed, capped, the reservation growing with it), claim the
 * idempotency key with the content hash as the fingerprint, probe the whole file, check label and
 * model requirements, then move the bytes to their content address and record the asset.
 *
 * Refusals before the claim (413, 415 from the first bytes, 429, an empty body) leave no record:
 * the same key may be sent again. Any refusal removes the staged file before the answer, and the
 * reservation is released however the upload ends.
 */
export class UploadService {
  private readonly budget: StagingBudget;

  constructor(
    private readonly deps: UploadDeps,
    private readonly storage: AssetStorage,
  ) {
    this.budget = new StagingBudget({
      bytesPerAccount: deps.config.limits.staged_upload_bytes_per_account,
      uploadsPerAccount: deps.config.limits.concurrent_uploads_per_account,
    });
  }

  async upload(input: UploadInput): Promise<UploadAnswer> {
    const reservation = this.reserve(input);
    try {
      const staged = await this.stage(input, reservation);
      try {
        return await this.record(input, staged);
      } finally {
        // Before answering: a refused upload has left nothing behind by the time the caller hears.
        await this.storage.discard(staged);
      }
    } finally {
      reservation.release();
    }
  }

  private reserve(input: UploadInput): StagingReservation {
    const maxBytes = this.deps.config.limits.asset_bytes;
    if (input.declaredBytes !== undefined && input.declaredBytes > maxBytes)
      throw new ApiError('BODY_TOO_LARGE', `the upload is larger than ${maxBytes} bytes`);
    const reservation = this.budget.reserve(input.principal.accountId, input.declaredBytes ?? 0);
    if ('kind' in reservation) throw refusalError(reservation);
    return reservation;
  }

  /** Judges the first bytes, then streams the body to staging; nothing is written before the judgement. */
  private async stage(input: UploadInput, reservation: StagingReservation): Promise<StagedUpload> {
    const { prefix, body, whole } = await readPrefix(input.body, SNIFF_WINDOW_BYTES, input.signal);
    if (whole && prefix.length === 0) throw invalidInput('body', 'the upload is empty');
    const refusal = await sniffPrefix(prefix, whole);
    if (refusal !== undefined) throw new ApiError('UNSUPPORTED_MEDIA_TYPE', refusal.message);
    const metered = budgetMeter(reservation);
    // `pipe`, not `pipeline`: a refusal mid-body destroys the meter, not the request, so the
    // answer still reaches the caller (the connection is closed after it).
    body.once('error', (error) => metered.destroy(error));
    try {
      return await this.storage.stage(
        body.pipe(metered),
        this.deps.config.limits.asset_bytes,
        input.signal,
      );
    } catch (error) {
      if (error instanceof TooLarge) throw new ApiError('BODY_TOO_LARGE', error.message);
      if (error instanceof StagingRefused) throw refusalError(error.refusal);
      throw error;
    } finally {
      body.unpipe(metered);
    }
  }

  private async record(input: UploadInput, staged: StagedUpload): Promise<UploadAnswer> {
    const { deps } = this;
    const label = normaliseLabel(input.label);
    const identity = {
      requestId: input.requestId,
      principal: input.principal,
      idempotencyKey: input.idempotencyKey,
      fingerprint: fingerprint('POST', '/v1/assets', {
        sha256: staged.sha256,
        label,
        fileName: input.fileName,
        model: input.modelId,
      }),
      method: 'POST',
      path: '/v1/assets',
      model: input.modelId ?? null,
    };
    const claim = await deps.requests.claim(identity, null);
    if (claim.kind === 'refused') throw claim.error;
    if (claim.kind === 'replay')
      return {
        status: claim.status,
        body: claim.body,
        headers: { 'idempotent-replayed': 'true', 'x-service-request-id': claim.requestId },
      };
    let body: unknown;
    try {
      body = { data: assetView(await this.accept(input, staged, label)) };
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      // Uploads hold no money: the record is all `finish` writes.
      const answer = await deps.requests.finish(identity, null, {
        kind: 'failed',
        error,
        upstreamRequestId: null,
      });
      return { ...answer, headers: {} };
    }
    const answer = await deps.requests.finish(identity, null, {
      kind: 'succeeded',
      status: 201,
      body,
      usage: {},
      amount: 0,
      pricingRule: 'assets: uploads are free',
      upstreamRequestId: null,
    });
    return { ...answer, headers: {} };
  }

  /** Probes the whole file, checks it, places its bytes and records the asset row. */
  private async accept(input: UploadInput, staged: StagedUpload, label: string) {
    const { deps } = this;
    const probe = await probeFile(staged.tempPath).catch((error: unknown) => {
      if (error instanceof ProbeError)
        throw error.reason === 'unsupported'
          ? new ApiError('UNSUPPORTED_MEDIA_TYPE', error.message)
          : invalidInput('body', error.message);
      throw error;
    });
    if (label !== probe.mediaType)
      throw invalidInput(
        'Content-Type',
        `the file is labelled ${label} but its bytes are ${probe.mediaType}`,
      );
    if (input.model !== undefined) checkRequirements(input.model, probe, staged.bytes);
    const row = await placeAsset(
      { db: deps.store.db, storage: this.storage, clock: deps.clock, ids: deps.ids },
      staged,
      probe,
      {
        accountId: input.principal.accountId,
        keyId: input.principal.keyId,
        fileName: input.fileName ?? null,
        model: input.modelId ?? null,
        taskId: null,
        delivered: true,
      },
    );
    await deps.store.db.insertInto('assets').values(row).execute();
    return row;
  }
}

class StagingRefused extends Error {
  override readonly name = 'StagingRefused';
  constructor(readonly refusal: StagingRefusal) {
    super(refusal.message);
  }
}

/** Grows the reservation with every chunk before it is written; fails the stream when it cannot. */
function budgetMeter(reservation: StagingReservation): Transform {
  let bytes = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      const refusal = reservation.cover(bytes);
      if (refusal === undefined) done(null, chunk);
      else done(new StagingRefused(refusal));
    },
  });
}

function refusalError(refusal: StagingRefusal): ApiError {
  return refusal.kind === 'too_large'
    ? new ApiError('BODY_TOO_LARGE', refusal.message)
    : new ApiError('RATE_LIMITED', refusal.message, undefined, {
        'retry-after': String(STAGING_RETRY_AFTER_SECONDS),
      });
}
