import { existsSync } from 'node:fs';
import { afterEach, expect, it } from 'vitest';
import {
  RECLAIM_GRACE_MS,
  STUCK_RECLAIM_MS,
  findReclaimable,
  reclaimObject,
  reclaimUnusedObjects,
} from '../../src/assets/asset-objects.js';
import type { LocalAssetStorage } from '../../src/assets/local-storage.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { manualClock, startGateway, type TestGateway } from '../helpers/gateway.js';
import { png } from '../helpers/media.js';

/**
 * Bytes no asset uses any more are deleted by the sweeper (assets/asset-objects.ts), and never
 * bytes that a live asset, or an upload in progress, needs.
 */
describeEachDialect('asset object reclaim on $name', (dialect) => {
  let gateway: TestGateway;
  const clock = manualClock();
  afterEach(async () => {
    await gateway.close();
  });

  async function setUp() {
    gateway = await startGateway(dialect, { clock });
    const owner = await gateway.account(0);
    const storage = gateway.services.assets as LocalAssetStorage;
    const db = gateway.services.store.db;
    const upload = async (bytes: Buffer) => {
      const response = await gateway.upload(owner.key, bytes, 'image/png');
      expect(response.statusCode, response.body).toBe(201);
      return response.json<{ data: { id: string; sha256: string } }>().data;
    };
    const remove = async (assetId: string) =>
      expect(
        (await gateway.call('DELETE', `/v1/assets/${assetId}`, { key: owner.key })).statusCode,
      ).toBe(200);
    const content = (assetId: string) =>
      gateway.call('GET', `/v1/assets/${assetId}/content`, { key: owner.key });
    const sweep = () => reclaimUnusedObjects(db, storage, { now: clock.now() });
    const stored = (sha256: string) => existsSync(storage.objectPath(sha256));
    const objectRow = (sha256: string) =>
      db.selectFrom('asset_objects').selectAll().where('sha256', '=', sha256).executeTakeFirst();
    return { owner, storage, db, upload, remove, content, sweep, stored, objectRow };
  }

  it('deletes bytes once no live asset names them and the grace has passed, never while one does', async () => {
    const { upload, remove, content, sweep, stored, objectRow } = await setUp();
    const bytes = png(5, 5);
    const first = await upload(bytes);
    const second = await upload(bytes);
    expect(second.sha256).toBe(first.sha256);
    await remove(first.id);
    clock.advance(RECLAIM_GRACE_MS + 1);
    expect(await sweep()).toEqual({ reclaimed: 0 });
    expect(stored(first.sha256)).toBe(true);
    expect(Buffer.from((await content(second.id)).rawPayload).equals(bytes)).toBe(true);

    await remove(second.id);
    expect(await sweep()).toEqual({ reclaimed: 1 });
    expect(stored(first.sha256)).toBe(false);
    expect(await objectRow(first.sha256)).toBeUndefined();
    expect(await sweep()).toEqual({ reclaimed: 0 });
  });

  it('keeps unused bytes for the grace period after their last upload', async () => {
    const { upload, remove, sweep, stored } = await setUp();
    const asset = await upload(png(6, 6));
    await remove(asset.id);
    clock.advance(RECLAIM_GRACE_MS - 1);
    expect(await sweep()).toEqual({ reclaimed: 0 });
    expect(stored(asset.sha256)).toBe(true);
  });

  it('places reclaimed bytes again when the same file is uploaded later', async () => {
    const { upload, remove, content, sweep, stored } = await setUp();
    const bytes = png(7, 7);
    const gone = await upload(bytes);
    await remove(gone.id);
    clock.advance(RECLAIM_GRACE_MS + 1);
    expect(await sweep()).toEqual({ reclaimed: 1 });
    const again = await upload(bytes);
    expect(stored(again.sha256)).toBe(true);
    expect(Buffer.from((await content(again.id)).rawPayload).equals(bytes)).toBe(true);
  });

  it('makes an upload wait while the same bytes are being reclaimed, then stores them', async () => {
    const { upload, content, db, storage, stored } = await setUp();
    const bytes = png(8, 8);
    const first = await upload(bytes);
    // A reclaim of these bytes in progress (another instance's sweep, say), finished 150 ms later.
    await db
      .updateTable('asset_objects')
      .set({ state: 'reclaiming', claimed_at: clock.now() })
      .where('sha256', '=', first.sha256)
      .execute();
    await db.updateTable('assets').set({ deleted_at: clock.now() }).execute();
    const finishReclaim = new Promise<void>((resolve, reject) => {
      setTimeout(() => {
        storage
          .remove(first.sha256)
          .then(() => db.deleteFrom('asset_objects').where('sha256', '=', first.sha256).execute())
          .then(() => resolve(), reject);
      }, 150);
    });
    const [again] = await Promise.all([upload(bytes), finishReclaim]);
    expect(stored(again.sha256)).toBe(true);
    expect(Buffer.from((await content(again.id)).rawPayload).equals(bytes)).toBe(true);
  });

  it('finishes a reclaim a dead instance left half-done, and leaves a running one alone', async () => {
    const { upload, remove, db, sweep, stored, objectRow } = await setUp();
    const stuck = await upload(png(9, 9));
    const running = await upload(png(10, 10));
    await remove(stuck.id);
    await remove(running.id);
    await db
      .updateTable('asset_objects')
      .set({ state: 'reclaiming', claimed_at: clock.now() - STUCK_RECLAIM_MS - 1 })
      .where('sha256', '=', stuck.sha256)
      .execute();
    await db
      .updateTable('asset_objects')
      .set({ state: 'reclaiming', claimed_at: clock.now() })
      .where('sha256', '=', running.sha256)
      .execute();
    expect(await sweep()).toEqual({ reclaimed: 1 });
    expect(stored(stuck.sha256)).toBe(false);
    expect(await objectRow(stuck.sha256)).toBeUndefined();
    expect(stored(running.sha256)).toBe(true);
    expect(await objectRow(running.sha256)).toMatchObject({ state: 'reclaiming' });
  });

  it('lets an upload that claims the bytes after the sweeper found them win', async () => {
    const { upload, remove, content, db, storage, stored } = await setUp();
    const bytes = png(12, 12);
    const first = await upload(bytes);
    await remove(first.id);
    clock.advance(RECLAIM_GRACE_MS + 1);
    const now = clock.now();
    const [candidate] = await findReclaimable(db, { now });
    expect(candidate).toEqual({ sha256: first.sha256, state: 'live' });
    if (candidate === undefined) return;
    const again = await upload(bytes);
    expect(await reclaimObject(db, storage, candidate, { now })).toBe(false);
    expect(stored(again.sha256)).toBe(true);
    expect(Buffer.from((await content(again.id)).rawPayload).equals(bytes)).toBe(true);
  });

  it('never deletes bytes an upload racing the sweeper has just stored', async () => {
    const { upload, remove, content, sweep } = await setUp();
    const bytes = png(11, 11);
    let previous = await upload(bytes);
    for (let round = 0; round < 25; round += 1) {
      await remove(previous.id);
      clock.advance(RECLAIM_GRACE_MS + 1);
      const [uploaded] = await Promise.all([upload(bytes), sweep()]);
      const read = await content(uploaded.id);
      expect(read.statusCode).toBe(200);
      expect(Buffer.from(read.rawPayload).equals(bytes)).toBe(true);
      previous = uploaded;
    }
  });
});
