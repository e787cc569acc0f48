import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import type { ConfigFile } from '../../src/config/schema.js';
import { ProviderRegistry } from '../../src/providers/registry.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { testConfig } from '../helpers/gateway.js';

/**
 * Risk: an upstream declared as real Volcengine Ark (`dialect: ark`) is still looked up by the
 * idempotency key of a submission whose answer was lost — Ark has no such look-up, so a guess
 * would be built on an answer that cannot exist — or a simulator upstream so declared still
 * answers with the extensions real Ark lacks, so the gateway's tests against it prove nothing.
 * And the provider dialects of the chat protocol must read as before, an `ark` one refused where
 * it means nothing.
 */

type Upstream = NonNullable<ConfigFile['upstreams']>[string];
const caller = { accountId: 'acct_ark' };

/** The configuration with its one upstream (named `simulator`, as the default models expect). */
const withUpstream = (upstream: Upstream) =>
  parseConfig(testConfig({ upstreams: { simulator: upstream } }), 'test');

const refusal = (upstream: Upstream): string => {
  try {
    withUpstream(upstream);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('the configuration was accepted');
};

describe('dialect ark in the configuration', () => {
  it.each([
    ['ark', { kind: 'ark', dialect: 'ark', base_url: 'https://ark.cn-beijing.volces.com/api/v3' }],
    ['simulator', { kind: 'simulator', dialect: 'ark' }],
  ] as const)('is taken by a %s upstream, with no look-up by key', async (_kind, upstream) => {
    const registry = new ProviderRegistry(withUpstream(upstream), {}, 'http://127.0.0.1:1');
    try {
      const h3 = registry.tasks('simulator', 'h3', caller);
      expect(h3.lookup).toBeUndefined();
      expect(h3.queryRetentionMs).toBe(7 * 86_400_000);
    } finally {
      await registry.close();
    }
  });

  it.each(['openai', 'cohere', 'anthropic'] as const)(
    'is refused on a %s upstream, naming the field',
    (kind) => {
      const message = refusal({ kind, dialect: 'ark', base_url: 'https://upstream.example/v1' });
      expect(message).toMatch(/dialect/);
      expect(message).toMatch(/only an ark \(or simulator\) upstream speaks it/);
    },
  );

  it('refuses task_lookup on, and a chat protocol, naming each field', () => {
    const lookup = refusal({ kind: 'simulator', dialect: 'ark', task_lookup: true });
    expect(lookup).toMatch(/task_lookup/);
    expect(lookup).toMatch(/cannot find a task by the idempotency key/);
    expect(refusal({ kind: 'simulator', dialect: 'ark', chat_api: 'chat_completions' })).toMatch(
      /chat_api.*not a chat one/s,
    );
  });

  it('leaves the chat dialects as they were: openai and simulator only', () => {
    expect(() => withUpstream({ kind: 'simulator', dialect: 'kimi' })).not.toThrow();
    expect(
      refusal({ kind: 'ark', dialect: 'kimi', base_url: 'https://ark.example/api/v3' }),
    ).toMatch(/only an openai \(or simulator\) upstream has a dialect/);
  });
});

describe('a simulator upstream with dialect ark', () => {
  let simulator: Simulator;
  let clock = Date.UTC(2026, 0, 1);
  beforeAll(async () => {
    simulator = await startSimulator({ now: () => clock });
  });
  afterAll(() => simulator.close());

  it("is served by the simulator's Ark routes: a result URL pre-signed for 24 hours", async () => {
    const config = withUpstream({ kind: 'simulator', dialect: 'ark' });
    const registry = new ProviderRegistry(config, {}, simulator.url);
    try {
      const h3 = registry.tasks('simulator', 'h3', caller);
      const submitted = await h3.submit(
        {
          kind: 'h3',
          action: 'generate',
          upstreamModel: 'sim-h3-generate',
          prompt: 'a quiet harbour [sim:task_seconds=1]',
          resolution: '480p',
          ratio: '16:9',
          duration: 2,
          generateAudio: false,
          watermark: false,
          references: [],
        },
        'task-ark-1',
      );
      if (submitted.kind !== 'accepted') throw new Error('expected an accepted submission');
      clock += 60_000;
      const result = await h3.poll(submitted.upstreamTaskId);
      if (result.kind !== 'completed') throw new Error(`expected completed, got ${result.kind}`);
      expect(result.outputs[0]?.url).toContain(`${simulator.url}/dialect/ark/v1/`);
      // Signed when the video was made, a second after its creation.
      expect(result.outputs[0]?.expiresAt).toBe(Date.UTC(2026, 0, 1) + 1_000 + 86_400_000);
      expect(result.report.secondsDelivered).toBe(2);
    } finally {
      await registry.close();
    }
  });
});
