import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ConfigFile } from '../../src/config/schema.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';
import { cliWithEnv } from '../helpers/processes.js';
import { sharedDatabase } from '../helpers/shared-database.js';

/**
 * The risk: `tollgate prices sync` is what applies a configuration's changed prices now that a
 * start no longer does. Run twice it must add nothing the second time, and run with an older
 * configuration (a rolling deploy's old instance, a config predating an admin change) it must
 * refuse to make an older version's prices current again.
 */
const withEmbedPrice = (inputPerMillionTokens: number): ConfigFile =>
  testConfig({
    models: testConfig().models.map((model) =>
      model.id === 'sim-embed'
        ? { ...model, prices: { input_per_million_tokens: inputPerMillionTokens } }
        : model,
    ),
  });

describeEachDialect('tollgate prices sync on $name', (dialect) => {
  const gateways: TestGateway[] = [];
  let remove = async () => {};
  afterEach(async () => {
    for (const gateway of gateways.splice(0)) await gateway.close();
    await remove();
  });

  const history = async (gateway: TestGateway) =>
    (
      (await gateway.admin('GET', '/admin/v1/models/sim-embed/prices'))['data'] as {
        price_version: string;
        prices: unknown;
      }[]
    ).map((entry) => [entry.price_version, entry.prices]);

  it('applies a changed configuration once, and refuses to go back to an older version', async () => {
    const shared = sharedDatabase(dialect);
    remove = shared.remove;
    const old = await startGateway(dialect, {
      services: shared.services,
      config: withEmbedPrice(500_000),
    });
    const updated = await startGateway(dialect, {
      services: shared.services,
      config: withEmbedPrice(700_000),
    });
    gateways.push(old, updated);

    const first = await updated.services.prices.syncFromConfig({ force: false });
    expect(first).toContainEqual({
      model: 'sim-embed',
      outcome: 'added',
      price_version: 'sim-embed@2',
    });
    expect(first).toContainEqual({
      model: 'sim-chat',
      outcome: 'unchanged',
      price_version: 'sim-chat@1',
    });
    // Idempotent: the second sync adds nothing.
    expect(await updated.services.prices.syncFromConfig({ force: false })).toContainEqual({
      model: 'sim-embed',
      outcome: 'unchanged',
      price_version: 'sim-embed@2',
    });
    expect(await history(updated)).toEqual([
      ['sim-embed@2', { input_per_million_tokens: 700_000 }],
      ['sim-embed@1', { input_per_million_tokens: 500_000 }],
    ]);

    // The old configuration's sync would make @1's prices current again: refused.
    const backwards = await old.services.prices.syncFromConfig({ force: false });
    expect(backwards).toContainEqual({
      model: 'sim-embed',
      outcome: 'refused',
      price_version: 'sim-embed@2',
      message: expect.stringMatching(
        /the configuration's prices are those of sim-embed@1, older than the current sim-embed@2: syncing would go backwards.*--force/,
      ),
    });
    expect(await history(old)).toHaveLength(2);

    // --force restores them, as a new version (versions are never rewritten).
    expect(await old.services.prices.syncFromConfig({ force: true })).toContainEqual({
      model: 'sim-embed',
      outcome: 'added',
      price_version: 'sim-embed@3',
    });
    expect((await history(old))[0]).toEqual(['sim-embed@3', { input_per_million_tokens: 500_000 }]);
  });

  it('two syncs at once add the changed prices once', async () => {
    const shared = sharedDatabase(dialect);
    remove = shared.remove;
    gateways.push(
      await startGateway(dialect, { services: shared.services, config: withEmbedPrice(500_000) }),
    );
    const config = withEmbedPrice(750_000);
    const first = await startGateway(dialect, { services: shared.services, config });
    const second = await startGateway(dialect, { services: shared.services, config });
    gateways.push(first, second);
    await Promise.all([
      first.services.prices.syncFromConfig({ force: false }),
      second.services.prices.syncFromConfig({ force: false }),
    ]);
    expect(await history(first)).toEqual([
      ['sim-embed@2', { input_per_million_tokens: 750_000 }],
      ['sim-embed@1', { input_per_million_tokens: 500_000 }],
    ]);
  });

  it('refuses to undo an admin change with the configuration it replaced', async () => {
    const shared = sharedDatabase(dialect);
    remove = shared.remove;
    const gateway = await startGateway(dialect, {
      services: shared.services,
      config: withEmbedPrice(500_000),
    });
    gateways.push(gateway);
    await gateway.admin('PUT', '/admin/v1/models/sim-embed/prices', {
      input_per_million_tokens: 650_000,
    });
    expect(await gateway.services.prices.syncFromConfig({ force: false })).toContainEqual(
      expect.objectContaining({
        model: 'sim-embed',
        outcome: 'refused',
        price_version: 'sim-embed@2',
      }),
    );
    expect((await gateway.services.prices.currentUncached('sim-embed')).prices).toEqual({
      input_per_million_tokens: 650_000,
    });
  });
});

describe('the prices sync command', () => {
  const folders: string[] = [];
  afterEach(() => {
    for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
  });

  it('prints one outcome per model, and exits 1 when it refused one', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'tollgate-sync-'));
    folders.push(dataDir);
    const configAt = (price: number) => {
      const file = path.join(dataDir, `config-${price}.json`);
      writeFileSync(file, JSON.stringify(withEmbedPrice(price)));
      return { TOLLGATE_DATA_DIR: dataDir, TOLLGATE_CONFIG: file };
    };
    const sync = async (env: NodeJS.ProcessEnv, ...options: string[]) => {
      const { code, stdout } = await cliWithEnv(env, 'prices', 'sync', ...options);
      const data = (JSON.parse(stdout) as { data: { model: string }[] }).data;
      return { code, embed: data.find((result) => result.model === 'sim-embed') };
    };
    // The first run seeds the empty store (as a first start would).
    expect(await sync(configAt(500_000))).toEqual({
      code: 0,
      embed: { model: 'sim-embed', outcome: 'unchanged', price_version: 'sim-embed@1' },
    });
    expect(await sync(configAt(800_000))).toEqual({
      code: 0,
      embed: { model: 'sim-embed', outcome: 'added', price_version: 'sim-embed@2' },
    });
    expect(await sync(configAt(800_000))).toMatchObject({
      code: 0,
      embed: { outcome: 'unchanged' },
    });
    expect(await sync(configAt(500_000))).toMatchObject({
      code: 1,
      embed: { outcome: 'refused', price_version: 'sim-embed@2' },
    });
    expect(await sync(configAt(500_000), '--force')).toMatchObject({
      code: 0,
      embed: { outcome: 'added', price_version: 'sim-embed@3' },
    });
  });
});
