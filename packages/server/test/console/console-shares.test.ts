import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/config/load.js';
import { loadShareLinkSecret, SHARE_LINK_SECRET_FILE } from '../../src/shares/share-link-secret.js';
import { describeEachDialect, dropSchema, type TestDialect } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { png } from '../helpers/media.js';
import { finishedTask, settleBodyOf, type TaskBody } from '../helpers/tasks.js';
import { consoleCall, MEMBER_PASSWORD, signedInMember, type Signed } from './console-member.js';

interface ConsoleShare {
  id: string;
  state: string;
  asset_id: string;
  task_id: string | null;
  public_url: string | null;
  token_source: 'api_key' | 'console';
  key_id: string;
}

function uploadInConsole(gateway: TestGateway, signed: Signed, body: Buffer, csrf = true) {
  return consoleCall(gateway, 'POST', '/console/api/assets', {
    signed,
    csrf,
    body,
    headers: {
      'content-type': 'image/png',
      'idempotency-key': randomUUID(),
      'x-tollgate-file-name': 'lighthouse.png',
    },
  });
}

function askShare(gateway: TestGateway, signed: Signed, body: object, csrf = true) {
  return consoleCall(gateway, 'POST', '/console/api/shares', {
    signed,
    csrf,
    body,
    headers: { 'idempotency-key': randomUUID() },
  });
}

async function consoleShare(gateway: TestGateway, signed: Signed, id: string) {
  const read = await consoleCall(gateway, 'GET', `/console/api/shares/${id}`, { signed });
  expect(read.statusCode, read.body).toBe(200);
  return read.json<ConsoleShare>();
}

/** A member's image task, settled from the console: its delivered output's asset id. */
async function settledImageTask(gateway: TestGateway, member: { key: string; signed: Signed }) {
  const created = await gateway.call('POST', '/v1/images/generations', {
    key: member.key,
    body: { model: 'sim-image', prompt: 'a lighthouse', size: '256x256' },
  });
  expect(created.statusCode, created.body).toBe(202);
  const task = await finishedTask(gateway, member.key, `/v1/images/${created.json<TaskBody>().id}`);
  const settled = await consoleCall(gateway, 'POST', `/console/api/tasks/${task.id}/settle`, {
    signed: member.signed,
    body: settleBodyOf(task),
    headers: { 'idempotency-key': randomUUID() },
  });
  expect(settled.statusCode, settled.body).toBe(200);
  return task.id;
}

describeEachDialect('console assets and shares on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  it('a member uploads from the console, asks for a share, an operator approves it, and /s/{token} serves the image without a key until the member revokes it', async () => {
    gateway = await startGateway(dialect);
    const member = await signedInMember(gateway);
    const image = png(16, 8);
    const uploaded = await uploadInConsole(gateway, member.signed, image);
    expect(uploaded.statusCode, uploaded.body).toBe(201);
    const assetId = uploaded.json<{ data: { id: string } }>().data.id;

    const listed = await consoleCall(gateway, 'GET', '/console/api/assets', {
      signed: member.signed,
    });
    expect(listed.json<{ data: { id: string }[] }>().data.map((asset) => asset.id)).toEqual([
      assetId,
    ]);
    // The account's keys read the account's assets, the console's uploads included.
    const byKey = await gateway.call('GET', `/v1/assets/${assetId}/content`, { key: member.key });
    expect(byKey.rawPayload.equals(image)).toBe(true);

    const asked = await askShare(gateway, member.signed, { asset_id: assetId });
    expect(asked.statusCode, asked.body).toBe(202);
    const shareId = asked.json<ConsoleShare>().id;
    const pending = await consoleShare(gateway, member.signed, shareId);
    expect(pending).toMatchObject({ state: 'pending_review', public_url: null });
    expect(pending.token_source).toBe('console');

    await gateway.admin('POST', `/admin/v1/shares/${shareId}/approve`, {});
    const approved = await consoleShare(gateway, member.signed, shareId);
    expect(approved.state).toBe('approved');
    expect(approved.public_url).toMatch(/^\/s\/[0-9A-Za-z]{43}$/);
    const publicUrl = approved.public_url ?? '';
    const served = await gateway.app.inject({ method: 'GET', url: publicUrl });
    expect(served.statusCode).toBe(200);
    expect(served.headers['content-type']).toBe('image/png');
    expect(served.rawPayload.equals(image)).toBe(true);

    // A console share is no key's: the account's key sees none of it.
    const keyRead = await gateway.call('GET', `/v1/shares/${shareId}`, { key: member.key });
    expect(keyRead.statusCode).toBe(404);
    const keyList = await gateway.call('GET', '/v1/shares', { key: member.key });
    expect(keyList.json<{ data: unknown[] }>().data).toEqual([]);

    const withoutCsrf = await consoleCall(gateway, 'DELETE', `/console/api/shares/${shareId}`, {
      signed: member.signed,
      csrf: false,
    });
    expect(withoutCsrf.statusCode).toBe(403);
    expect((await gateway.app.inject({ method: 'GET', url: publicUrl })).statusCode).toBe(200);

    const revoked = await consoleCall(gateway, 'DELETE', `/console/api/shares/${shareId}`, {
      signed: member.signed,
    });
    expect(revoked.statusCode, revoked.body).toBe(200);
    expect(revoked.json<ConsoleShare>()).toMatchObject({ state: 'revoked', public_url: null });
    expect((await gateway.app.inject({ method: 'GET', url: publicUrl })).statusCode).toBe(404);
    const journal = await gateway.admin('GET', `/admin/v1/shares/${shareId}`);
    const actors = (journal['events'] as { actor: string; action: string }[]).map(
      (event) => `${event.action} by ${event.actor.replace(/:.*/, '')}`,
    );
    expect(actors).toEqual(['requested by console', 'approved by operator', 'revoked by console']);
  });

  it('a member shares a delivered task’s image from the console; an approved share serves it, and a key’s own share shows its state but no link', async () => {
    gateway = await startGateway(dialect);
    const member = await signedInMember(gateway, 100_000_000);
    const taskId = await settledImageTask(gateway, member);
    const asked = await askShare(gateway, member.signed, { task_id: taskId });
    expect(asked.statusCode, asked.body).toBe(202);
    const shareId = asked.json<ConsoleShare>().id;
    await gateway.admin('POST', `/admin/v1/shares/${shareId}/approve`, {});
    const approved = await consoleShare(gateway, member.signed, shareId);
    expect(approved.task_id).toBe(taskId);
    const served = await gateway.app.inject({ method: 'GET', url: approved.public_url ?? '' });
    expect(served.statusCode).toBe(200);
    expect(served.headers['content-type']).toMatch(/^image\//);

    // The key asks for its own share: the console shows it, without a link it cannot compute.
    const byKey = await gateway.call('POST', '/v1/shares', {
      key: member.key,
      body: { task_id: taskId },
    });
    expect(byKey.statusCode, byKey.body).toBe(202);
    const keyShareId = byKey.json<{ id: string }>().id;
    await gateway.admin('POST', `/admin/v1/shares/${keyShareId}/approve`, {});
    const keyShare = await consoleShare(gateway, member.signed, keyShareId);
    expect(keyShare).toMatchObject({
      state: 'approved',
      token_source: 'api_key',
      key_id: member.keyId,
      public_url: null,
    });
    const keyView = await gateway.call('GET', `/v1/shares/${keyShareId}`, { key: member.key });
    expect(keyView.json<{ public_url: string }>().public_url).toMatch(/^\/s\//);
    const listed = await consoleCall(gateway, 'GET', '/console/api/shares', {
      signed: member.signed,
    });
    expect(listed.json<{ data: ConsoleShare[] }>().data.map((share) => share.id)).toEqual([
      keyShareId,
      shareId,
    ]);
  });

  it('another account’s member gets the 404 of a missing id for the asset and the share, and changes nothing', async () => {
    gateway = await startGateway(dialect);
    const owner = await signedInMember(gateway, 100_000_000);
    const stranger = await signedInMember(gateway);
    const uploaded = await uploadInConsole(gateway, owner.signed, png(8, 8));
    const assetId = uploaded.json<{ data: { id: string } }>().data.id;
    const taskId = await settledImageTask(gateway, owner);
    const shareId = (await askShare(gateway, owner.signed, { asset_id: assetId })).json<{
      id: string;
    }>().id;
    await gateway.admin('POST', `/admin/v1/shares/${shareId}/approve`, {});
    const signed = stranger.signed;
    const refusals = [
      await consoleCall(gateway, 'GET', `/console/api/assets/${assetId}/content`, { signed }),
      await consoleCall(gateway, 'DELETE', `/console/api/assets/${assetId}`, { signed }),
      await consoleCall(gateway, 'GET', `/console/api/shares/${shareId}`, { signed }),
      await consoleCall(gateway, 'DELETE', `/console/api/shares/${shareId}`, { signed }),
      await askShare(gateway, signed, { asset_id: assetId }),
      await askShare(gateway, signed, { task_id: taskId }),
    ];
    expect(refusals.map((response) => response.statusCode)).toEqual([404, 404, 404, 404, 404, 404]);
    const strangerLists = await Promise.all(
      ['/console/api/assets', '/console/api/shares'].map((url) =>
        consoleCall(gateway as TestGateway, 'GET', url, { signed }),
      ),
    );
    expect(strangerLists.map((list) => list.json<{ data: unknown[] }>().data)).toEqual([[], []]);
    expect((await consoleShare(gateway, owner.signed, shareId)).state).toBe('approved');
    const content = await consoleCall(gateway, 'GET', `/console/api/assets/${assetId}/content`, {
      signed: owner.signed,
    });
    expect(content.statusCode).toBe(200);
  });

  it('an API key never reaches the console’s assets and shares, and a state change without the CSRF token records nothing', async () => {
    gateway = await startGateway(dialect);
    const member = await signedInMember(gateway);
    const bearer = { authorization: `Bearer ${member.key}` };
    const byKey = await Promise.all([
      gateway.app.inject({ method: 'GET', url: '/console/api/assets', headers: bearer }),
      gateway.app.inject({ method: 'GET', url: '/console/api/shares', headers: bearer }),
      gateway.app.inject({
        method: 'POST',
        url: '/console/api/assets',
        headers: { ...bearer, 'content-type': 'image/png', 'idempotency-key': randomUUID() },
        payload: png(8, 8),
      }),
    ]);
    expect(byKey.map((response) => response.statusCode)).toEqual([401, 401, 401]);

    const forgedUpload = await uploadInConsole(gateway, member.signed, png(8, 8), false);
    expect(forgedUpload.statusCode).toBe(403);
    expect(forgedUpload.json<{ error: { param: string } }>().error.param).toBe('X-CSRF-Token');
    const assets = await consoleCall(gateway, 'GET', '/console/api/assets', {
      signed: member.signed,
    });
    expect(assets.json<{ data: unknown[] }>().data).toEqual([]);
    const uploaded = await uploadInConsole(gateway, member.signed, png(8, 8));
    const assetId = uploaded.json<{ data: { id: string } }>().data.id;
    const forgedShare = await askShare(gateway, member.signed, { asset_id: assetId }, false);
    expect(forgedShare.statusCode).toBe(403);
    const shares = await consoleCall(gateway, 'GET', '/console/api/shares', {
      signed: member.signed,
    });
    expect(shares.json<{ data: unknown[] }>().data).toEqual([]);
  });

  it('bad input is refused naming the field; deleting a shared asset stops its link', async () => {
    gateway = await startGateway(dialect);
    const member = await signedInMember(gateway);
    const both = await askShare(gateway, member.signed, { asset_id: 'a', task_id: 'b' });
    expect(both.statusCode).toBe(400);
    expect(both.json<{ error: { param: string } }>().error.param).toBe('task_id');
    const noKey = await consoleCall(gateway, 'POST', '/console/api/shares', {
      signed: member.signed,
      body: { asset_id: 'asset_x' },
    });
    expect(noKey.json<{ error: { param: string } }>().error.param).toBe('Idempotency-Key');
    const mislabelled = await consoleCall(gateway, 'POST', '/console/api/assets', {
      signed: member.signed,
      body: png(8, 8),
      headers: { 'content-type': 'image/jpeg', 'idempotency-key': randomUUID() },
    });
    expect(mislabelled.statusCode).toBe(400);
    expect(mislabelled.json<{ error: { param: string } }>().error.param).toBe('Content-Type');

    const uploaded = await uploadInConsole(gateway, member.signed, png(8, 8));
    const assetId = uploaded.json<{ data: { id: string } }>().data.id;
    const shareId = (await askShare(gateway, member.signed, { asset_id: assetId })).json<{
      id: string;
    }>().id;
    await gateway.admin('POST', `/admin/v1/shares/${shareId}/approve`, {});
    const publicUrl = (await consoleShare(gateway, member.signed, shareId)).public_url ?? '';
    const deleted = await consoleCall(gateway, 'DELETE', `/console/api/assets/${assetId}`, {
      signed: member.signed,
    });
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect((await gateway.app.inject({ method: 'GET', url: publicUrl })).statusCode).toBe(404);
    expect((await consoleShare(gateway, member.signed, shareId)).public_url).toBeNull();
  });

  it('deleting from the console an asset a queued task still uses is 409 ASSET_IN_USE, and the asset stays', async () => {
    gateway = await startGateway(dialect);
    const member = await signedInMember(gateway, 100_000_000);
    const uploaded = await uploadInConsole(gateway, member.signed, png(8, 8));
    const assetId = uploaded.json<{ data: { id: string } }>().data.id;
    const created = await gateway.call('POST', '/v1/videos', {
      key: member.key,
      body: {
        model: 'sim-video',
        prompt: 'the same fox, running',
        seconds: 1,
        size: '320x240',
        assetIds: [assetId],
      },
    });
    expect(created.statusCode, created.body).toBe(202);
    const refused = await consoleCall(gateway, 'DELETE', `/console/api/assets/${assetId}`, {
      signed: member.signed,
    });
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({ error: { code: 'ASSET_IN_USE' } });
    const content = await consoleCall(gateway, 'GET', `/console/api/assets/${assetId}/content`, {
      signed: member.signed,
    });
    expect(content.statusCode).toBe(200);
  });

  it('the secret file is created once and reused across a restart: the same link, still serving; under another secret no link is shown and the old one keeps serving', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'tollgate-share-secret-'));
    const assetsDir = path.join(dataDir, 'assets');
    const database = persistentDatabase(dialect, dataDir);
    try {
      const first = await loadShareLinkSecret({ fromEnvironment: undefined, dataDir });
      expect(first.source).toBe('file');
      expect(statSync(path.join(dataDir, SHARE_LINK_SECRET_FILE)).mode & 0o777).toBe(0o600);
      gateway = await startGateway(dialect, {
        services: { ...database, assetsDir, shareLinkSecret: first.key },
      });
      const member = await signedInMember(gateway);
      const uploaded = await uploadInConsole(gateway, member.signed, png(8, 8));
      const assetId = uploaded.json<{ data: { id: string } }>().data.id;
      const shareId = (await askShare(gateway, member.signed, { asset_id: assetId })).json<{
        id: string;
      }>().id;
      await gateway.admin('POST', `/admin/v1/shares/${shareId}/approve`, {});
      const link = (await consoleShare(gateway, member.signed, shareId)).public_url;
      await gateway.app.close();
      await gateway.services.close();

      const again = await loadShareLinkSecret({ fromEnvironment: undefined, dataDir });
      expect(again.key.equals(first.key)).toBe(true);
      const restarted = await startGateway(dialect, {
        services: { ...database, assetsDir, shareLinkSecret: again.key },
      });
      gateway = restarted;
      const signed = await signInAgain(restarted, member.email);
      expect((await consoleShare(restarted, signed, shareId)).public_url).toBe(link);
      const served = await restarted.app.inject({ method: 'GET', url: link ?? '' });
      expect(served.statusCode).toBe(200);
      await restarted.expectLedgerClean();
      await restarted.app.close();
      await restarted.services.close();
      gateway = undefined;

      // Another secret (changed, or another instance's): the console shows no link rather than
      // one that would not open, and the link given out keeps serving until revoked.
      const changed = await startGateway(dialect, {
        services: { ...database, assetsDir, shareLinkSecret: Buffer.alloc(32, 7) },
      });
      gateway = changed;
      const signedAgain = await signInAgain(changed, member.email);
      expect((await consoleShare(changed, signedAgain, shareId)).public_url).toBeNull();
      expect((await changed.app.inject({ method: 'GET', url: link ?? '' })).statusCode).toBe(200);
      await changed.app.close();
      await changed.services.close();
      gateway = undefined;
    } finally {
      await dropSchema(database.postgresSchema);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

/** The member signs in again on a restarted gateway (sessions outlive restarts too). */
async function signInAgain(gateway: TestGateway, email: string): Promise<Signed> {
  const signIn = await gateway.app.inject({
    method: 'POST',
    url: '/console/api/session',
    payload: { email, password: MEMBER_PASSWORD },
  });
  expect(signIn.statusCode).toBe(200);
  const cookie = String([signIn.headers['set-cookie']].flat()[0]).split(';')[0] ?? '';
  return { cookie, csrf: signIn.json<{ csrf_token: string }>().csrf_token };
}

/** A database that outlives one gateway: a SQLite file, or a PostgreSQL schema of its own. */
function persistentDatabase(dialect: TestDialect, dataDir: string) {
  return dialect.name === 'sqlite'
    ? { databaseUrl: `sqlite:${path.join(dataDir, 'tollgate.sqlite')}` }
    : dialect.fresh();
}

describe('the share-link secret', () => {
  it('comes from the environment when it is set, and then writes no file', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'tollgate-share-secret-'));
    try {
      const secret = await loadShareLinkSecret({
        fromEnvironment: 'x'.repeat(40),
        dataDir,
      });
      expect(secret).toEqual({ key: Buffer.from('x'.repeat(40)), source: 'environment' });
      expect(() => statSync(path.join(dataDir, SHARE_LINK_SECRET_FILE))).toThrow();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('is read from the variable the configuration names, and refused when shorter than 32 characters', () => {
    const secret = 'k'.repeat(32);
    expect(loadSettings({ TOLLGATE_SHARE_LINK_SECRET: secret }).shareLinkSecret).toBe(secret);
    expect(loadSettings({}).shareLinkSecret).toBeUndefined();
    expect(() => loadSettings({ TOLLGATE_SHARE_LINK_SECRET: 'short' })).toThrow(
      /server\.share_link_secret_env: environment variable TOLLGATE_SHARE_LINK_SECRET is shorter than 32/,
    );
  });

  it('two starts racing on one data directory end with one secret', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'tollgate-share-secret-'));
    try {
      const secrets = await Promise.all(
        Array.from({ length: 8 }, () =>
          loadShareLinkSecret({ fromEnvironment: undefined, dataDir }),
        ),
      );
      expect(new Set(secrets.map((secret) => secret.key.toString('hex'))).size).toBe(1);
      // 32 random bytes, written as 64 hex characters.
      expect(secrets[0]?.key.length).toBe(64);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
