import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { pathForLog } from '../../src/log-redaction.js';
import { createLogger } from '../../src/logger.js';
import { ShareStore } from '../../src/shares/share-store.js';
import { shareToken } from '../../src/shares/share-token.js';
import { describeEachDialect, type TestDialect } from '../helpers/dialects.js';
import {
  ADMIN_TOKEN,
  errorWithoutRequestId,
  startGateway,
  type TestGateway,
} from '../helpers/gateway.js';
import { png } from '../helpers/media.js';
import { finishedTask, settleBodyOf, type TaskBody } from '../helpers/tasks.js';
import { cliIn } from '../helpers/processes.js';

interface Share {
  object: string;
  id: string;
  state: string;
  task_id: string | null;
  asset_id: string;
  created_at: string;
  decided_at: string | null;
  reason: string | null;
  public_url: string | null;
}

interface ReviewedShare extends Omit<Share, 'public_url'> {
  account_id: string;
  key_id: string;
  asset_deleted: boolean;
  serving: boolean;
  events?: { at: string; actor: string; action: string; reason: string | null }[];
}

describeEachDialect('public shares behind review, on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  async function start(options: Parameters<typeof startGateway>[1] = {}): Promise<TestGateway> {
    gateway = await startGateway(dialect, options);
    return gateway;
  }

  /** An image task of `key`, finished by the worker; settled (delivered) unless told otherwise. */
  async function imageTask(client: TestGateway, key: string, settle = true): Promise<TaskBody> {
    const created = await client.call('POST', '/v1/images/generations', {
      key,
      body: { model: 'sim-image', prompt: 'a red fox', size: '256x256' },
    });
    expect(created.statusCode, created.body).toBe(202);
    const path = `/v1/images/${created.json<TaskBody>().id}`;
    const done = await finishedTask(client, key, path);
    expect(done.status).toBe('succeeded');
    if (!settle) return done;
    const settled = await client.call('POST', `${path}/settle`, { key, body: settleBodyOf(done) });
    expect(settled.statusCode, settled.body).toBe(200);
    return settled.json<TaskBody>();
  }

  async function uploadedPng(client: TestGateway, key: string): Promise<string> {
    const uploaded = await client.upload(key, png(16, 8), 'image/png');
    expect(uploaded.statusCode, uploaded.body).toBe(201);
    return uploaded.json<{ data: { id: string } }>().data.id;
  }

  async function askForShare(
    client: TestGateway,
    key: string,
    body: unknown,
    idempotencyKey?: string,
  ): Promise<LightMyRequestResponse> {
    return client.call('POST', '/v1/shares', {
      key,
      body,
      ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
    });
  }

  async function pendingShare(client: TestGateway, key: string, body: unknown): Promise<Share> {
    const created = await askForShare(client, key, body);
    expect(created.statusCode, created.body).toBe(202);
    return created.json<Share>();
  }

  /** An admin call that may fail (the gateway helper's `admin` throws on non-2xx). */
  function operator(client: TestGateway, method: 'GET' | 'POST', url: string, body?: unknown) {
    return client.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      ...(body === undefined ? {} : { payload: body as object }),
    });
  }

  /** A public read: no key, no headers but those given. */
  function publicRead(
    client: TestGateway,
    token: string,
    method: 'GET' | 'HEAD' = 'GET',
    headers: Record<string, string> = {},
  ) {
    return client.app.inject({ method, url: `/s/${token}`, headers });
  }

  const unknownToken = () => shareToken(`tgk_${randomUUID()}`, 'share_unknown');

  it('pending -> approve -> the public URL serves GET, HEAD and Range with no key; other keys see a missing share', async () => {
    const client = await start();
    const { accountId, key } = await client.account(100_000_000);
    const sibling = await client.newKey(accountId);
    const stranger = await client.account(0);
    const task = await imageTask(client, key);
    const firstOutput = task.outputs?.[0];
    if (firstOutput === undefined) throw new Error('no output');

    const share = await pendingShare(client, key, { task_id: task.id });
    expect(share).toMatchObject({
      object: 'share',
      state: 'pending_review',
      task_id: task.id,
      asset_id: firstOutput.asset_id,
      public_url: null,
      decided_at: null,
    });
    // Before review the token already exists, and serves nothing.
    const token = shareToken(key, share.id);
    const early = await publicRead(client, token);
    expect(errorWithoutRequestId(early)).toEqual(
      errorWithoutRequestId(await publicRead(client, unknownToken())),
    );
    expect(early.statusCode).toBe(404);
    expect((await client.call('GET', `/v1/shares/${share.id}`, { key })).json()).toMatchObject({
      state: 'pending_review',
      public_url: null,
    });

    const queue = await client.admin('GET', '/admin/v1/shares?state=pending_review');
    expect((queue['data'] as ReviewedShare[]).map((row) => row.id)).toEqual([share.id]);
    const approved = (await client.admin('POST', `/admin/v1/shares/${share.id}/approve`, {
      reason: 'a fox, nothing personal',
    })) as unknown as ReviewedShare;
    expect(approved).toMatchObject({ state: 'approved', serving: true });
    expect(JSON.stringify(approved)).not.toContain(token);

    const owned = (await client.call('GET', `/v1/shares/${share.id}`, { key })).json<Share>();
    expect(owned).toMatchObject({ state: 'approved', reason: 'a fox, nothing personal' });
    expect(owned.public_url).toBe(`/s/${token}`);
    expect(token).toMatch(/^[0-9A-Za-z]{43}$/);
    const listed = (await client.call('GET', '/v1/shares', { key })).json<{ data: Share[] }>();
    expect(listed.data.map((row) => [row.id, row.public_url])).toEqual([[share.id, `/s/${token}`]]);

    const original = await client.call('GET', firstOutput.content_url, { key });
    const read = await publicRead(client, token);
    expect(read.statusCode).toBe(200);
    expect(read.headers['content-type']).toBe('image/png');
    expect(read.rawPayload.equals(original.rawPayload)).toBe(true);
    expect(read.headers).toMatchObject({
      'cache-control': 'public, no-cache',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
    });
    const head = await publicRead(client, token, 'HEAD');
    expect(head.statusCode).toBe(200);
    expect(head.rawPayload.length).toBe(0);
    expect(Number(head.headers['content-length'])).toBe(original.rawPayload.length);
    const partial = await publicRead(client, token, 'GET', { range: 'bytes=0-9' });
    expect(partial.statusCode).toBe(206);
    expect(partial.headers['content-range']).toBe(`bytes 0-9/${original.rawPayload.length}`);
    expect(partial.rawPayload.equals(original.rawPayload.subarray(0, 10))).toBe(true);
    const revalidated = await publicRead(client, token, 'GET', {
      'if-none-match': String(read.headers['etag']),
    });
    expect(revalidated.statusCode).toBe(304);

    // Another key of the same account, or of another account: the 404 of a missing share.
    const missing = await client.call('GET', '/v1/shares/share_missing', { key });
    for (const outsider of [sibling.key, stranger.key]) {
      const seen = await client.call('GET', `/v1/shares/${share.id}`, { key: outsider });
      expect(errorWithoutRequestId(seen)).toEqual(errorWithoutRequestId(missing));
      const withdrawn = await client.call('DELETE', `/v1/shares/${share.id}`, { key: outsider });
      expect(errorWithoutRequestId(withdrawn)).toEqual(errorWithoutRequestId(missing));
      expect((await client.call('GET', '/v1/shares', { key: outsider })).json()).toMatchObject({
        data: [],
      });
    }
    expect((await publicRead(client, token)).statusCode).toBe(200);
  }, 60_000);

  it('a rejected share serves 404; rejecting needs a reason; a rejected share cannot be approved', async () => {
    const client = await start();
    const { key } = await client.account(0);
    const share = await pendingShare(client, key, { asset_id: await uploadedPng(client, key) });

    const withoutReason = await operator(client, 'POST', `/admin/v1/shares/${share.id}/reject`, {});
    expect(withoutReason.statusCode).toBe(400);
    expect(withoutReason.json()).toMatchObject({
      error: { code: 'INVALID_INPUT', param: 'reason' },
    });
    const blank = await operator(client, 'POST', `/admin/v1/shares/${share.id}/reject`, {
      reason: '   ',
    });
    expect(blank.json()).toMatchObject({ error: { code: 'INVALID_INPUT', param: 'reason' } });
    expect((await client.admin('GET', `/admin/v1/shares/${share.id}`))['state']).toBe(
      'pending_review',
    );

    await client.admin('POST', `/admin/v1/shares/${share.id}/reject`, { reason: 'shows a face' });
    const token = shareToken(key, share.id);
    const read = await publicRead(client, token);
    expect(errorWithoutRequestId(read)).toEqual(
      errorWithoutRequestId(await publicRead(client, unknownToken())),
    );
    expect(read.json()).toMatchObject({ error: { code: 'NOT_FOUND' } });
    expect((await client.call('GET', `/v1/shares/${share.id}`, { key })).json()).toMatchObject({
      state: 'rejected',
      reason: 'shows a face',
      public_url: null,
    });
    const approve = await operator(client, 'POST', `/admin/v1/shares/${share.id}/approve`);
    expect(approve.statusCode).toBe(409);
    expect(approve.json()).toMatchObject({ error: { code: 'SHARE_DECISION_NOT_ALLOWED' } });
    const withdraw = await client.call('DELETE', `/v1/shares/${share.id}`, { key });
    expect(withdraw.json()).toMatchObject({ error: { code: 'SHARE_DECISION_NOT_ALLOWED' } });
    expect((await publicRead(client, token)).statusCode).toBe(404);
  });

  it('revoked by its owner or by an operator, an approved share serves 404 from then on', async () => {
    const client = await start();
    const { key } = await client.account(0);
    const assetId = await uploadedPng(client, key);
    // One pending share per key and asset (share-flood.test.ts): the second is asked for once
    // the first is decided.
    const byOwner = await pendingShare(client, key, { asset_id: assetId });
    await client.admin('POST', `/admin/v1/shares/${byOwner.id}/approve`);
    const byOperator = await pendingShare(client, key, { asset_id: assetId });
    await client.admin('POST', `/admin/v1/shares/${byOperator.id}/approve`);
    const ownerToken = shareToken(key, byOwner.id);
    const operatorToken = shareToken(key, byOperator.id);
    expect(ownerToken).not.toBe(operatorToken);
    expect((await publicRead(client, ownerToken)).statusCode).toBe(200);
    expect((await publicRead(client, operatorToken)).statusCode).toBe(200);

    const revoked = await client.call('DELETE', `/v1/shares/${byOwner.id}`, { key });
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json()).toMatchObject({ state: 'revoked', public_url: null });
    // A retried DELETE answers the share as it is and journals nothing more.
    const again = await client.call('DELETE', `/v1/shares/${byOwner.id}`, { key });
    expect(again.json()).toMatchObject({ state: 'revoked' });
    expect((await publicRead(client, ownerToken)).statusCode).toBe(404);

    const noReason = await operator(client, 'POST', `/admin/v1/shares/${byOperator.id}/revoke`, {});
    expect(noReason.json()).toMatchObject({ error: { param: 'reason' } });
    expect((await publicRead(client, operatorToken)).statusCode).toBe(200);
    await client.admin('POST', `/admin/v1/shares/${byOperator.id}/revoke`, {
      reason: 'reported by a viewer',
    });
    expect((await publicRead(client, operatorToken)).statusCode).toBe(404);
    const twice = await operator(client, 'POST', `/admin/v1/shares/${byOperator.id}/revoke`, {
      reason: 'again',
    });
    expect(twice.json()).toMatchObject({ error: { code: 'SHARE_DECISION_NOT_ALLOWED' } });
    const journal = (await client.admin(
      'GET',
      `/admin/v1/shares/${byOwner.id}`,
    )) as unknown as ReviewedShare;
    expect(journal.events?.map((event) => event.action)).toEqual([
      'requested',
      'approved',
      'revoked',
    ]);

    // The owner withdraws a share still pending review: it never serves.
    const withdrawn = await pendingShare(client, key, { asset_id: assetId });
    await client.call('DELETE', `/v1/shares/${withdrawn.id}`, { key });
    const late = await operator(client, 'POST', `/admin/v1/shares/${withdrawn.id}/approve`);
    expect(late.json()).toMatchObject({ error: { code: 'SHARE_DECISION_NOT_ALLOWED' } });
    expect((await publicRead(client, shareToken(key, withdrawn.id))).statusCode).toBe(404);
  });

  it("someone else's task or asset, an undelivered output and a missing id are the same 404, and nothing is recorded", async () => {
    const client = await start();
    const { accountId, key } = await client.account(100_000_000);
    const sibling = await client.newKey(accountId);
    const stranger = await client.account(100_000_000);
    const delivered = await imageTask(client, key);
    const unsettled = await imageTask(client, key, false);
    const undeliveredOutput = await client.services.store.db
      .selectFrom('assets')
      .select('id')
      .where('task_id', '=', unsettled.id)
      .executeTakeFirstOrThrow();
    const upload = await uploadedPng(client, key);

    const taskMissing = errorWithoutRequestId(
      await askForShare(client, key, { task_id: 'task_missing' }),
    );
    expect(taskMissing).toMatchObject({
      status: 404,
      error: { code: 'TASK_NOT_FOUND', param: 'task_id' },
    });
    for (const [asker, taskId] of [
      [stranger.key, delivered.id],
      [sibling.key, delivered.id], // a task belongs to the key that created it
      [key, unsettled.id],
    ] as const) {
      const idempotencyKey = randomUUID();
      const refused = await askForShare(client, asker, { task_id: taskId }, idempotencyKey);
      expect(errorWithoutRequestId(refused)).toEqual(taskMissing);
      // Nothing recorded: no share, no request record for that idempotency key.
      const record = await client.call('GET', `/v1/requests?idempotency_key=${idempotencyKey}`, {
        key: asker,
      });
      expect(record.statusCode).toBe(404);
    }

    const assetMissing = errorWithoutRequestId(
      await askForShare(client, key, { asset_id: 'asset_missing' }),
    );
    expect(assetMissing).toMatchObject({
      status: 404,
      error: { code: 'NOT_FOUND', param: 'asset_id' },
    });
    for (const [asker, assetId] of [
      [stranger.key, upload],
      [key, undeliveredOutput.id],
    ] as const)
      expect(
        errorWithoutRequestId(await askForShare(client, asker, { asset_id: assetId })),
      ).toEqual(assetMissing);
    expect(await client.services.store.db.selectFrom('shares').select('id').execute()).toEqual([]);

    // Settling delivers the output: the same task can now be shared.
    const settled = await client.call('POST', `/v1/images/${unsettled.id}/settle`, {
      key,
      body: settleBodyOf(unsettled),
    });
    expect(settled.statusCode).toBe(200);
    expect((await askForShare(client, key, { task_id: unsettled.id })).statusCode).toBe(202);
  }, 60_000);

  it('bad bodies are 400 naming the field; a service key may not share an asset; nothing is created', async () => {
    const client = await start();
    const { accountId, key } = await client.account(0);
    const service = await client.newKey(accountId, { kind: 'service' });
    const assetId = await uploadedPng(client, key);
    const cases: [unknown, string][] = [
      [{}, 'task_id'],
      [{ task_id: 'task_1', asset_id: assetId }, 'task_id'],
      [{ asset_id: assetId, public: true }, 'body.public'],
      [{ asset_id: 42 }, 'body.asset_id'],
      [{ asset_id: '' }, 'body.asset_id'],
    ];
    for (const [body, param] of cases) {
      const refused = await askForShare(client, key, body);
      expect(refused.statusCode, JSON.stringify(body)).toBe(400);
      expect(refused.json()).toMatchObject({ error: { code: 'INVALID_INPUT', param } });
    }
    const without = await client.call('POST', '/v1/shares', {
      key,
      body: { asset_id: assetId },
      idempotencyKey: null,
    });
    expect(without.json()).toMatchObject({ error: { param: 'Idempotency-Key' } });
    const byService = await askForShare(client, service.key, { asset_id: assetId });
    expect(byService.statusCode).toBe(403);
    expect(byService.json()).toMatchObject({ error: { code: 'PERMISSION_DENIED' } });
    expect(await client.services.store.db.selectFrom('shares').select('id').execute()).toEqual([]);
    // The same asset with a personal key and a well-formed body is accepted.
    expect((await askForShare(client, key, { asset_id: assetId })).statusCode).toBe(202);
  });

  it('the same Idempotency-Key replays the share instead of asking twice', async () => {
    const client = await start();
    const { key } = await client.account(0);
    const assetId = await uploadedPng(client, key);
    const idempotencyKey = randomUUID();
    const first = await askForShare(client, key, { asset_id: assetId }, idempotencyKey);
    const second = await askForShare(client, key, { asset_id: assetId }, idempotencyKey);
    expect(second.statusCode).toBe(202);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.json<Share>().id).toBe(first.json<Share>().id);
    const other = await askForShare(client, key, { task_id: 'task_x' }, idempotencyKey);
    expect(other.json()).toMatchObject({ error: { code: 'IDEMPOTENCY_CONFLICT' } });
    expect(await client.services.store.db.selectFrom('shares').select('id').execute()).toHaveLength(
      1,
    );
  });

  it('every request and decision is journalled with who and why', async () => {
    const client = await start();
    const { key, keyId } = await client.account(0);
    const share = await pendingShare(client, key, { asset_id: await uploadedPng(client, key) });
    await client.admin('POST', `/admin/v1/shares/${share.id}/approve`, { reason: 'harmless' });
    await client.call('DELETE', `/v1/shares/${share.id}`, { key });
    const reviewed = (await client.admin(
      'GET',
      `/admin/v1/shares/${share.id}`,
    )) as unknown as ReviewedShare;
    expect(reviewed).toMatchObject({ state: 'revoked', key_id: keyId, serving: false });
    expect(
      reviewed.events?.map(({ actor, action, reason }) => ({ actor, action, reason })),
    ).toEqual([
      { actor: `key:${keyId}`, action: 'requested', reason: null },
      { actor: 'operator', action: 'approved', reason: 'harmless' },
      { actor: `key:${keyId}`, action: 'revoked', reason: null },
    ]);
  });

  it('an approval racing the owner withdrawing ends revoked, and the journal shows what happened', async () => {
    const client = await start();
    const { key } = await client.account(0);
    const assetId = await uploadedPng(client, key);
    for (let round = 0; round < 5; round += 1) {
      const share = await pendingShare(client, key, { asset_id: assetId });
      const [approval, withdrawal] = await Promise.all([
        operator(client, 'POST', `/admin/v1/shares/${share.id}/approve`),
        client.call('DELETE', `/v1/shares/${share.id}`, { key }),
      ]);
      expect(withdrawal.statusCode).toBe(200);
      const reviewed = (await client.admin(
        'GET',
        `/admin/v1/shares/${share.id}`,
      )) as unknown as ReviewedShare;
      expect(reviewed.state).toBe('revoked');
      const actions = reviewed.events?.map((event) => event.action);
      // Approved first, then revoked; or revoked first, and the approval refused.
      expect(actions).toEqual(
        approval.statusCode === 200
          ? ['requested', 'approved', 'revoked']
          : ['requested', 'revoked'],
      );
      if (approval.statusCode !== 200)
        expect(approval.json()).toMatchObject({ error: { code: 'SHARE_DECISION_NOT_ALLOWED' } });
      expect((await publicRead(client, shareToken(key, share.id))).statusCode).toBe(404);
    }
  });

  it('a decision written against a state the share has left changes nothing and journals nothing', async () => {
    const client = await start();
    const { key } = await client.account(0);
    const share = await pendingShare(client, key, { asset_id: await uploadedPng(client, key) });
    await client.admin('POST', `/admin/v1/shares/${share.id}/reject`, { reason: 'no' });
    // A reviewer who read the share while it was still pending approves it late.
    const store = new ShareStore(client.services.store.db);
    const moved = await store.transition(
      client.services.store.db,
      { id: share.id, from: 'pending_review', to: 'approved', now: Date.now() },
      {
        id: 'shev_late',
        share_id: share.id,
        at: Date.now(),
        actor: 'operator',
        action: 'approved',
        reason: null,
      },
    );
    expect(moved).toBe(false);
    const reviewed = (await client.admin(
      'GET',
      `/admin/v1/shares/${share.id}`,
    )) as unknown as ReviewedShare;
    expect(reviewed.state).toBe('rejected');
    expect(reviewed.events?.map((event) => event.action)).toEqual(['requested', 'rejected']);
    expect((await publicRead(client, shareToken(key, share.id))).statusCode).toBe(404);
  });

  it("a deleted asset's share serves 404 and shows no public URL", async () => {
    const client = await start();
    const { key } = await client.account(0);
    const assetId = await uploadedPng(client, key);
    const share = await pendingShare(client, key, { asset_id: assetId });
    await client.admin('POST', `/admin/v1/shares/${share.id}/approve`);
    const token = shareToken(key, share.id);
    expect((await publicRead(client, token)).statusCode).toBe(200);
    const review = await operator(client, 'GET', `/admin/v1/shares/${share.id}/content`);
    expect(review.statusCode).toBe(200);
    expect(review.headers['cache-control']).toBe('private, no-store');

    expect((await client.call('DELETE', `/v1/assets/${assetId}`, { key })).statusCode).toBe(200);
    const read = await publicRead(client, token);
    expect(errorWithoutRequestId(read)).toEqual(
      errorWithoutRequestId(await publicRead(client, unknownToken())),
    );
    expect((await client.call('GET', `/v1/shares/${share.id}`, { key })).json()).toMatchObject({
      state: 'approved',
      public_url: null,
    });
    expect(await client.admin('GET', `/admin/v1/shares/${share.id}`)).toMatchObject({
      asset_deleted: true,
      serving: false,
    });
    expect((await operator(client, 'GET', `/admin/v1/shares/${share.id}/content`)).statusCode).toBe(
      404,
    );
    // A new share of the deleted asset is refused like a missing one.
    expect((await askForShare(client, key, { asset_id: assetId })).statusCode).toBe(404);
  });

  it('the public token never reaches a log line', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write: (chunk: Buffer, _encoding, done) => void (lines.push(chunk.toString()), done()),
    });
    const client = await start({ services: { logger: createLogger('trace', sink) } });
    const { key } = await client.account(0);
    const share = await pendingShare(client, key, { asset_id: await uploadedPng(client, key) });
    await client.admin('POST', `/admin/v1/shares/${share.id}/approve`);
    const token = shareToken(key, share.id);
    await client.call('GET', `/v1/shares/${share.id}`, { key });
    await client.call('GET', '/v1/shares', { key });
    expect((await publicRead(client, token)).statusCode).toBe(200);
    expect((await publicRead(client, token, 'HEAD')).statusCode).toBe(200);
    expect((await publicRead(client, token, 'GET', { range: 'bytes=5-1' })).statusCode).toBe(200);
    expect((await publicRead(client, `${token}x`)).statusCode).toBe(404);
    expect((await publicRead(client, unknownToken())).statusCode).toBe(404);
    const all = lines.join('');
    expect(all).toContain('"path":"/s/[redacted]"');
    expect(all).not.toContain(token);
    expect(all).not.toContain(token.slice(0, 20));
  });
});

describe('share tokens are always redacted from logged paths', () => {
  it('pathForLog blots out every token shape a share can have', () => {
    for (let index = 0; index < 500; index += 1) {
      const token = shareToken(`tgk_${randomBytes(24).toString('hex')}`, `share_${index}`);
      expect(token).toMatch(/^[0-9A-Za-z]{43}$/);
      expect(pathForLog(`/s/${token}`)).toBe('/s/[redacted]');
      expect(pathForLog(`/s/${token}?download=1`)).toBe('/s/[redacted]');
    }
  });
});

/**
 * The CLI reads its database from the environment (as `tollgate` does), so this runs on an
 * SQLite file the gateway also uses; the rules are the service's, run on every dialect above.
 */
describe('share review from the CLI', () => {
  it('lists the pending queue, refuses a rejection without a reason, approves and revokes with one', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'tollgate-shares-cli-'));
    const file: TestDialect = {
      name: 'sqlite',
      fresh: () => ({ databaseUrl: `sqlite:${path.join(dataDir, 'tollgate.sqlite')}` }),
    };
    const client = await startGateway(file);
    const cli = (...args: string[]) => cliIn(dataDir, ...args);
    try {
      const { key } = await client.account(0);
      const uploaded = await client.upload(key, png(8, 8), 'image/png');
      const assetId = uploaded.json<{ data: { id: string } }>().data.id;
      const created = await client.call('POST', '/v1/shares', { key, body: { asset_id: assetId } });
      const shareId = created.json<Share>().id;

      const queue = await cli('shares', 'list', '--state', 'pending_review');
      expect(queue.code).toBe(0);
      expect((queue.json['data'] as ReviewedShare[]).map((row) => row.id)).toEqual([shareId]);
      const badState = await cli('shares', 'list', '--state', 'maybe');
      expect(badState).toMatchObject({ code: 1, json: { error: { code: 'INVALID_INPUT' } } });

      const noReason = await cli('shares', 'reject', shareId);
      expect(noReason).toMatchObject({ code: 1, json: { error: { code: 'INVALID_INPUT' } } });
      const approved = await cli('shares', 'approve', shareId, '--reason', 'fine');
      expect(approved).toMatchObject({ code: 0, json: { state: 'approved' } });
      const token = shareToken(key, shareId);
      expect((await client.app.inject({ url: `/s/${token}` })).statusCode).toBe(200);

      const revoked = await cli('shares', 'revoke', shareId, '--reason', 'owner asked by mail');
      expect(revoked).toMatchObject({ code: 0, json: { state: 'revoked' } });
      expect((await client.app.inject({ url: `/s/${token}` })).statusCode).toBe(404);
      const shown = await cli('shares', 'show', shareId);
      expect(
        (shown.json['events'] as { actor: string; action: string; reason: string | null }[]).map(
          ({ actor, action, reason }) => [actor, action, reason],
        ),
      ).toEqual([
        [expect.stringMatching(/^key:/), 'requested', null],
        ['operator', 'approved', 'fine'],
        ['operator', 'revoked', 'owner asked by mail'],
      ]);
      await client.expectLedgerClean();
    } finally {
      await client.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
