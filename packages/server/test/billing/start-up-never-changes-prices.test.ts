import { Writable } from 'node:stream';
import { afterEach, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';
import { sharedDatabase } from '../helpers/shared-database.js';

/**
 * The risk: prices came from start-up. Every instance re-synced price versions from its own
 * configuration when it started: instances starting together created duplicate versions, and
 * an instance with an old configuration restarting during a rolling deploy made the old prices
 * current again. A start now seeds only a model with no version at all (version 1, once), and
 * otherwise only warns.
 */
describeEachDialect('starting an instance on $name', (dialect) => {
  const gateways: TestGateway[] = [];
  let remove = async () => {};
  afterEach(async () => {
    for (const gateway of gateways.splice(0)) await gateway.close();
    await remove();
  });

  const withEmbedPrice = (inputPerMillionTokens: number) =>
    testConfig({
      models: testConfig().models.map((model) =>
        model.id === 'sim-embed'
          ? { ...model, prices: { input_per_million_tokens: inputPerMillionTokens } }
          : model,
      ),
    });

  function capturedLogs(): { logger: ReturnType<typeof createLogger>; lines: string[] } {
    const lines: string[] = [];
    const sink = new Writable({
      write: (chunk: Buffer, _encoding, done) => void (lines.push(chunk.toString()), done()),
    });
    return { logger: createLogger('info', sink), lines };
  }

  async function versions(gateway: TestGateway, model: string): Promise<string[]> {
    const rows = await gateway.services.store.db
      .selectFrom('model_prices')
      .select('price_version')
      .where('model', '=', model)
      .orderBy('version', 'asc')
      .execute();
    return rows.map((row) => row.price_version);
  }

  it('three instances starting at once create exactly one version 1 per model', async () => {
    const shared = sharedDatabase(dialect);
    remove = shared.remove;
    // The first start migrates alone (migrations are not what is tested), then three start
    // together on a store that has no price yet.
    const migrating = await startGateway(dialect, {
      services: shared.services,
      config: testConfig({ models: [] }),
    });
    await migrating.close();
    const started = await Promise.all(
      [1, 2, 3].map(() => startGateway(dialect, { services: shared.services })),
    );
    gateways.push(...started);
    const [first] = started;
    if (first === undefined) throw new Error('no gateway started');
    for (const model of testConfig().models)
      expect(await versions(first, model.id), model.id).toEqual([`${model.id}@1`]);
  });

  it('an instance with an older configuration restarting keeps the current prices, and warns', async () => {
    const shared = sharedDatabase(dialect);
    remove = shared.remove;
    const oldConfig = withEmbedPrice(500_000);
    const newConfig = withEmbedPrice(700_000);
    const first = await startGateway(dialect, { services: shared.services, config: oldConfig });
    gateways.push(first);
    // The rolling deploy: a new instance with the new prices, and the operator's sync.
    const upgraded = await startGateway(dialect, { services: shared.services, config: newConfig });
    gateways.push(upgraded);
    expect(await versions(upgraded, 'sim-embed')).toEqual(['sim-embed@1']);
    expect(await upgraded.services.prices.syncFromConfig({ force: false })).toContainEqual({
      model: 'sim-embed',
      outcome: 'added',
      price_version: 'sim-embed@2',
    });

    // An instance still on the old configuration restarts.
    const logs = capturedLogs();
    const restarted = await startGateway(dialect, {
      services: { ...shared.services, logger: logs.logger },
      config: oldConfig,
    });
    gateways.push(restarted);
    expect(await versions(restarted, 'sim-embed')).toEqual(['sim-embed@1', 'sim-embed@2']);
    const current = await restarted.services.prices.currentUncached('sim-embed');
    expect(current).toMatchObject({
      priceVersion: 'sim-embed@2',
      prices: { input_per_million_tokens: 700_000 },
    });
    const { key } = await restarted.account(10_000_000);
    const answer = await restarted.call('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input: 'priced at the current version' },
    });
    expect(answer.statusCode, answer.body).toBe(200);
    const record = (
      await restarted.call(
        'GET',
        `/v1/requests/${String(answer.headers['x-service-request-id'])}`,
        { key },
      )
    ).json<{ bill: { price_version: string } }>();
    expect(record.bill.price_version).toBe('sim-embed@2');

    const warnings = logs.lines
      .map((line) => JSON.parse(line) as { level: number; model?: string; msg: string })
      .filter((line) => line.level === 40 && line.model === 'sim-embed');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.msg).toMatch(
      /sim-embed: the configuration's prices are those of sim-embed@1, older than the current sim-embed@2, which stays current.*tollgate prices sync/,
    );
    expect(restarted.services.pricesToSync.map((warning) => warning.model)).toEqual(['sim-embed']);
    await restarted.expectLedgerClean();
  });

  it('an instance with changed prices starting adds no version, and says prices sync applies them', async () => {
    const shared = sharedDatabase(dialect);
    remove = shared.remove;
    gateways.push(
      await startGateway(dialect, { services: shared.services, config: withEmbedPrice(500_000) }),
    );
    const logs = capturedLogs();
    const changed = await startGateway(dialect, {
      services: { ...shared.services, logger: logs.logger },
      config: withEmbedPrice(900_000),
    });
    gateways.push(changed);
    expect(await versions(changed, 'sim-embed')).toEqual(['sim-embed@1']);
    expect((await changed.services.prices.currentUncached('sim-embed')).prices).toEqual({
      input_per_million_tokens: 500_000,
    });
    expect(logs.lines.join('')).toMatch(
      /sim-embed: the configuration's prices differ from the current version sim-embed@1, which stays current; tollgate prices sync applies them/,
    );
  });
});
