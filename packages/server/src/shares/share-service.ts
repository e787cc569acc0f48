import type { Kysely } from 'kysely';
import type { Principal } from '../auth/key-service.js';
import { lockAccountMoney } from '../billing/account-money.js';
import { ApiError, invalidInput } from '../errors/api-error.js';
import type { ServedObject } from '../assets/asset-objects.js';
import type { Claim, RequestIdentity, RequestService } from '../requests/request-service.js';
import type { Database, ShareState } from '../store/schema.js';
import { outputsOf } from '../tasks/task-stored-json.js';
import type { Clock, IdGenerator } from '../util/effects.js';
import { parseInput } from '../errors/input-schema.js';
import {
  parseDecision,
  reviewFilter,
  type DecisionInput,
  type ShareTarget,
} from './share-input.js';
import { canMove, DECISION_TARGET, type ShareAction } from './share-states.js';
import { ShareStore, type SharedRow } from './share-store.js';
import { looksLikeShareToken, shareToken, shareTokenHash } from './share-token.js';
import { isServing, operatorShareView, shareView, type ShareView } from './share-view.js';
import { listPage, parseLimit } from '../util/list-page.js';

/** The key that owns shares, with the key itself: only it computes the shares' tokens. */
export interface ShareOwner {
  readonly principal: Principal;
  readonly apiKey: string;
}

/**
 * Who asks for a share, and so which secret derives its token (share-token.ts): an API key (its
 * plaintext; it may share its own tasks' outputs), or the console, acting for the account's owner
 * (the gateway's share-link secret; it may share any task's output of the account, as the owner
 * sees every task: docs/console.md).
 */
export type ShareRequester =
  { readonly kind: 'api_key'; readonly apiKey: string } | { readonly kind: 'console' };

type Decision = Exclude<ShareAction, 'requested'>;

/**
 * The one 404 of shares: a missing share, another key's, and on the public route an unknown
 * token or a share that does not serve (pending, rejected, revoked, asset deleted) all look alike.
 */
/**
 * `Retry-After` of a refusal for too many pending shares: reviews are decided by people, so no
 * moment is known when one frees up; a minute keeps a polite client from hammering.
 */
const PENDING_SHARES_RETRY_AFTER_SECONDS = 60;

const shareNotFound = () => new ApiError('NOT_FOUND', 'no such share');

const unshareable = (target: ShareTarget) =>
  target.kind === 'task'
    ? new ApiError(
        'TASK_NOT_FOUND',
        'no delivered task of this key with this task_id (it does not exist, is another key’s, or is not settled and delivered)',
        'task_id',
      )
    : new ApiError(
        'NOT_FOUND',
        'no delivered asset of this account with this asset_id (it does not exist, is another account’s, is deleted, or is not delivered)',
        'asset_id',
      );

/**
 * Public shares behind review (docs/shares.md). Owners ask for a share of a delivered result
 * (`create`, with the idempotency claim: the record and the share commit together or not at
 * all), read, list and withdraw their own; operators list, approve, reject and revoke with a
 * reason; anyone with an approved share's token reads its content. Every state change is one
 * guarded move of share-states.ts, journalled in the same transaction with who and why.
 */
export class ShareService {
  private readonly store: ShareStore;

  constructor(
    private readonly deps: {
      db: Kysely<Database>;
      requests: RequestService;
      clock: Clock;
      ids: IdGenerator;
      /** Most shares one account may have awaiting review (`limits.pending_shares_per_account`). */
      maxPendingPerAccount: number;
      /** Keys the tokens of shares asked for from the console (share-link-secret.ts). */
      shareLinkSecret: Buffer;
    },
  ) {
    this.store = new ShareStore(deps.db);
  }

  /**
   * `POST /v1/shares`: 202 with the share, `pending_review`. The target must be the caller's
   * own delivered result; anything else is the same 404 whatever the reason, and records
   * nothing (the claim rolls back), so the same idempotency key may be used again. Asking again
   * for an asset this key already has awaiting review answers that share (200), queueing nothing;
   * an account with `pending_shares_per_account` shares awaiting review is 429 `RATE_LIMITED`.
   * Both are judged under a lock of the account's row, and the index of migration 015 keeps one
   * pending share per key and asset whatever races.
   */
  async create(
    identity: RequestIdentity,
    requester: ShareRequester,
    target: ShareTarget,
  ): Promise<Claim> {
    const shareId = this.deps.ids.next('share');
    const { principal } = identity;
    return this.deps.requests.claim(identity, null, [], async (trx) => {
      const asset = await this.deliveredTarget(trx, principal, requester, target);
      // One share request of an account at a time judges "already pending?" and "how many
      // pending?", so neither answer is stale when it inserts.
      await lockAccountMoney(trx, principal.accountId);
      const already = await this.store.pendingOf(trx, principal.keyId, asset.id);
      if (already !== undefined)
        return {
          status: 200,
          body: shareView(already, null),
          taskId: null,
          rule: 'shares: free',
        };
      const pending = await this.store.pendingCount(trx, principal.accountId);
      if (pending >= this.deps.maxPendingPerAccount)
        throw new ApiError(
          'RATE_LIMITED',
          `this account has ${pending} shares awaiting review, the most allowed (limits.pending_shares_per_account); ask again once some are decided, or withdraw one`,
          undefined,
          { 'retry-after': String(PENDING_SHARES_RETRY_AFTER_SECONDS) },
        );
      const now = this.deps.clock.now();
      const row = {
        id: shareId,
        account_id: principal.accountId,
        key_id: principal.keyId,
        task_id: target.kind === 'task' ? target.id : null,
        asset_id: asset.id,
        state: 'pending_review' as const,
        token_hash: shareTokenHash(
          shareToken(
            requester.kind === 'console' ? this.deps.shareLinkSecret : requester.apiKey,
            shareId,
          ),
        ),
        token_source: requester.kind,
        created_at: now,
        decided_at: null,
        decision_reason: null,
        updated_at: now,
      };
      const inserted = await this.store.insert(
        trx,
        row,
        this.event(shareId, actorOf(principal), 'requested', null, now),
      );
      if (!inserted) {
        // Another request queued this asset between our look and our insert (no lock held it).
        const first = await this.store.pendingOf(trx, principal.keyId, asset.id);
        if (first === undefined) throw new Error('a pending share conflicted, yet none is there');
        return { status: 200, body: shareView(first, null), taskId: null, rule: 'shares: free' };
      }
      const shared: SharedRow = {
        ...row,
        sha256: asset.sha256,
        media_type: asset.media_type,
        bytes: asset.bytes,
        asset_created_at: asset.created_at,
        asset_deleted_at: asset.deleted_at,
        asset_delivered_at: asset.delivered_at,
      };
      return { status: 202, body: shareView(shared, null), taskId: null, rule: 'shares: free' };
    });
  }

  /**
   * The asset a target names, if it is the caller's and delivered; else `unshareable`. A key
   * shares its own tasks' outputs; the console, any task's of the account.
   */
  private async deliveredTarget(
    trx: Kysely<Database>,
    principal: Principal,
    requester: ShareRequester,
    target: ShareTarget,
  ) {
    let assetId = target.id;
    if (target.kind === 'task') {
      const task = await trx
        .selectFrom('tasks')
        .select(['id', 'key_id', 'account_id', 'outputs'])
        .where('id', '=', target.id)
        .executeTakeFirst();
      const owned =
        task !== undefined &&
        (requester.kind === 'console'
          ? task.account_id === principal.accountId
          : task.key_id === principal.keyId);
      // A task id names its first output, as the caller sees it in `outputs` (read with its
      // schema: tasks/task-stored-json.ts); a text answer (H3 `understand`) has no file to share.
      const first = owned ? outputsOf(task)?.[0] : undefined;
      if (first === undefined || !('asset_id' in first)) throw unshareable(target);
      assetId = first.asset_id;
    }
    const asset = await trx
      .selectFrom('assets')
      .selectAll()
      .where('id', '=', assetId)
      .where('account_id', '=', principal.accountId)
      .where('deleted_at', 'is', null)
      .where('delivered_at', 'is not', null)
      .executeTakeFirst();
    if (asset === undefined) throw unshareable(target);
    return asset;
  }

  /** A share read by the key that asked for it; every other key gets the 404 of a missing id. */
  async read(owner: ShareOwner, id: string): Promise<ShareView> {
    return this.ownerView(owner, await this.owned(owner, id));
  }

  /** The owner key's shares, newest first; `after` is a share id of this key. */
  async list(owner: ShareOwner, query: { limit?: unknown; after?: unknown }) {
    const limit = parseLimit(query.limit, 20);
    const after = await this.cursor(query.after, (row) => row.key_id === owner.principal.keyId);
    const rows = await this.store.listForKey(owner.principal.keyId, { limit: limit + 1, after });
    return listPage(rows, limit, (row) => this.ownerView(owner, row));
  }

  /**
   * `DELETE /v1/shares/{id}`: the owner withdraws a pending share or revokes an approved one.
   * Deleting a revoked share again answers it as it is (a retried DELETE is not an error); a
   * rejected one cannot be revoked (409).
   */
  async withdraw(owner: ShareOwner, id: string): Promise<ShareView> {
    const moved = await this.decide(id, 'revoked', {
      actor: actorOf(owner.principal),
      reason: null,
      owns: (row) => row.key_id === owner.principal.keyId,
    });
    return this.ownerView(owner, moved);
  }

  /**
   * The console (docs/console.md, "Shares"): the account's shares, whichever key or console user
   * asked, newest first; each with its public link when the console can compute it (asked for
   * from the console: `token_source` `console`). A key's share shows its state only: its link is
   * read with that key (`GET /v1/shares/{id}`).
   */
  async listForAccount(accountId: string, query: { limit?: unknown; after?: unknown }) {
    const limit = parseLimit(query.limit, 20);
    const after = await this.cursor(query.after, (row) => row.account_id === accountId);
    const rows = await this.store.listForAccount(accountId, { limit: limit + 1, after });
    return listPage(rows, limit, (row) => this.accountView(row));
  }

  /** The console: one share of the account, or the 404 of a missing one. */
  async readForAccount(accountId: string, id: string) {
    const row = await this.store.byId(id);
    if (row === undefined || row.account_id !== accountId) throw shareNotFound();
    return this.accountView(row);
  }

  /**
   * The console: the account's owner withdraws a pending share or revokes an approved one, of
   * any of its keys or console users (never more exposure: only less). `actor` is the console
   * user, as the journal names it.
   */
  async withdrawForAccount(accountId: string, id: string, actor: Principal) {
    const moved = await this.decide(id, 'revoked', {
      actor: actorOf(actor),
      reason: null,
      owns: (row) => row.account_id === accountId,
    });
    return this.accountView(moved);
  }

  private accountView(row: SharedRow) {
    const token = row.token_source === 'console' ? this.tokenOf(row) : null;
    return {
      ...shareView(row, token),
      token_source: row.token_source,
      key_id: row.key_id,
      media_type: row.media_type,
      bytes: row.bytes,
    };
  }

  /**
   * The token of a share asked for from the console, computed with the share-link secret; `null`
   * when that is not the secret that derived it (the secret was changed since, or another
   * instance generated its own): a link that would not open is never shown.
   */
  private tokenOf(row: SharedRow): string | null {
    const token = shareToken(this.deps.shareLinkSecret, row.id);
    return shareTokenHash(token) === row.token_hash ? token : null;
  }

  /** Operators: shares of every account, oldest first (the review queue), optionally in one state. */
  async listForReview(query: { state?: unknown; limit?: unknown; after?: unknown }) {
    const { state } = parseInput(reviewFilter, query);
    const limit = parseLimit(query.limit, 100);
    const after = await this.cursor(query.after, () => true);
    const rows = await this.store.listForReview(state, { limit: limit + 1, after });
    return listPage(rows, limit, (row) => operatorShareView(row));
  }

  /** The share a list continues after: one the lister may see, else 400 naming `after`. */
  private async cursor(
    after: unknown,
    visible: (row: SharedRow) => boolean,
  ): Promise<SharedRow | undefined> {
    if (after === undefined) return undefined;
    const row = typeof after === 'string' ? await this.store.byId(after) : undefined;
    if (row === undefined || !visible(row))
      throw invalidInput('after', 'is not the id of a share in this list');
    return row;
  }

  /** Operators: one share with its whole journal. */
  async show(id: string) {
    const row = await this.store.byId(id);
    if (row === undefined) throw shareNotFound();
    return operatorShareView(row, await this.store.events(id));
  }

  approve(id: string, input: DecisionInput) {
    return this.operatorDecision(id, 'approved', parseDecision(input, false));
  }

  reject(id: string, input: DecisionInput) {
    return this.operatorDecision(id, 'rejected', parseDecision(input, true));
  }

  revoke(id: string, input: DecisionInput) {
    return this.operatorDecision(id, 'revoked', parseDecision(input, true));
  }

  /** Operators: the content under review, whatever the share's state, while its asset exists. */
  async reviewContent(id: string): Promise<ServedObject> {
    const row = await this.store.byId(id);
    if (row === undefined) throw shareNotFound();
    if (row.asset_deleted_at !== null)
      throw new ApiError('NOT_FOUND', `the asset of share ${id} was deleted by its owner`);
    return servedObject(row);
  }

  /**
   * `GET /s/{token}`: the content of an approved share whose asset is still there. Anything else
   * (a malformed or unknown token, a pending, rejected or revoked share, a deleted asset) is one
   * identical 404. The token is looked up by its hash: the database never compares the secret.
   */
  async publicContent(token: string): Promise<ServedObject> {
    if (!looksLikeShareToken(token)) throw shareNotFound();
    const row = await this.store.byTokenHash(shareTokenHash(token));
    if (row === undefined || !isServing(row)) throw shareNotFound();
    return servedObject(row);
  }

  private async operatorDecision(id: string, decision: Decision, reason: string | null) {
    const moved = await this.decide(id, decision, { actor: 'operator', reason });
    return operatorShareView(moved, await this.store.events(id));
  }

  /**
   * Moves a share by `decision`, journalled with `actor` and `reason`. Reads the state, checks the
   * move against share-states.ts (409 `SHARE_DECISION_NOT_ALLOWED` if it is not listed), then
   * compare-and-sets on the state read; when someone else moved it first, reads again and
   * decides on what is there now. The moves form no cycle, so this ends within three rounds.
   *
   * With `owns` (the owner's DELETE, by key or from the console), a share it does not own is the
   * 404 of a missing one, and a share already in the target state is answered as it is: a
   * retried DELETE is no error.
   */
  private async decide(
    id: string,
    decision: Decision,
    by: { actor: string; reason: string | null; owns?: (row: SharedRow) => boolean },
  ): Promise<SharedRow> {
    const to = DECISION_TARGET[decision];
    for (let round = 0; round < 3; round += 1) {
      const current = await this.store.byId(id);
      if (current === undefined) throw shareNotFound();
      if (by.owns !== undefined) {
        if (!by.owns(current)) throw shareNotFound();
        if (current.state === to) return current;
      }
      if (!canMove(current.state, to))
        throw decisionNotAllowed(current.id, current.state, decision);
      const now = this.deps.clock.now();
      const moved = await this.deps.db
        .transaction()
        .execute((trx) =>
          this.store.transition(
            trx,
            { id, from: current.state, to, now },
            this.event(id, by.actor, decision, by.reason, now),
          ),
        );
      if (moved) {
        const after = await this.store.byId(id);
        if (after === undefined) throw shareNotFound();
        return after;
      }
    }
    throw new Error(`share ${id} kept moving under a decision; share-states.ts has a cycle`);
  }

  private async owned(owner: ShareOwner, id: string): Promise<SharedRow> {
    const row = await this.store.byId(id);
    if (row === undefined || row.key_id !== owner.principal.keyId) throw shareNotFound();
    return row;
  }

  private ownerView(owner: ShareOwner, row: SharedRow): ShareView {
    if (!isServing(row)) return shareView(row, null);
    return shareView(
      row,
      row.token_source === 'console' ? this.tokenOf(row) : shareToken(owner.apiKey, row.id),
    );
  }

  private event(
    shareId: string,
    actor: string,
    action: ShareAction,
    reason: string | null,
    at: number,
  ) {
    return { id: this.deps.ids.next('shev'), share_id: shareId, at, actor, action, reason };
  }
}

/**
 * The share service of an app or a CLI run. Stateless (the database is the state), so each
 * registration may build its own.
 */
export function shareServiceOf(deps: {
  readonly store: { readonly db: Kysely<Database> };
  readonly requests: RequestService;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly config: { readonly limits: { readonly pending_shares_per_account: number } };
  readonly shareLinkSecret: Buffer;
}): ShareService {
  return new ShareService({
    db: deps.store.db,
    requests: deps.requests,
    clock: deps.clock,
    ids: deps.ids,
    maxPendingPerAccount: deps.config.limits.pending_shares_per_account,
    shareLinkSecret: deps.shareLinkSecret,
  });
}

/**
 * How the journal names who asked or withdrew: `key:<id>` for an API key, `console:<user id>` for
 * a console user (whose principal's key id is `console:<user id>`: http/console/console-principal.ts).
 */
function actorOf(principal: Principal): string {
  return principal.keyId.startsWith('console:') ? principal.keyId : `key:${principal.keyId}`;
}

function decisionNotAllowed(id: string, state: ShareState, decision: Decision): ApiError {
  const verb = { approved: 'approve', rejected: 'reject', revoked: 'revoke' }[decision];
  return new ApiError(
    'SHARE_DECISION_NOT_ALLOWED',
    `cannot ${verb} share ${id}: it is ${state}${state === 'rejected' || state === 'revoked' ? ' (final)' : ''}`,
  );
}

function servedObject(row: SharedRow): ServedObject {
  return {
    sha256: row.sha256,
    bytes: row.bytes,
    media_type: row.media_type,
    created_at: row.asset_created_at,
  };
}
