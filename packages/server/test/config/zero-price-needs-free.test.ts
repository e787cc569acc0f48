import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import { parseConfig } from '../../src/config/load.js';

const index = (id: string) => defaultConfig.models.findIndex((model) => model.id === id);

function withModel(id: string, edit: (model: Record<string, unknown>) => object): unknown {
  const config = structuredClone(defaultConfig);
  return {
    ...config,
    models: config.models.map((model) =>
      model.id === id ? edit(model as unknown as Record<string, unknown>) : model,
    ),
  };
}

/**
 * The risk: a price of 0 in the configuration file — a typo for 10, a line left from testing —
 * makes a model free of charge without anyone deciding it, while the admin API refuses the same
 * 0 without `"free": true`. One rule (config/price-rules.ts) for both: the file needs
 * `"free": true` on the model, and start-up names the field otherwise.
 */
describe('a zero price in the configuration file', () => {
  const chat = index('sim-chat');
  const image = index('sim-image');

  it('is refused without "free": true, naming the field', () => {
    const raw = withModel('sim-chat', (model) => ({
      ...model,
      prices: { ...(model['prices'] as object), output_per_million_tokens: 0 },
    }));
    expect(() => parseConfig(raw, 'tollgate.json')).toThrow(
      `models.${chat}.prices.output_per_million_tokens: is 0, which makes it free of charge; set "free": true on the model if that is meant`,
    );
  });

  it('is refused for a task price too (a nested amount)', () => {
    const raw = withModel('sim-image', (model) => {
      const prices = structuredClone(model['prices']) as {
        per_image: Record<string, Record<string, number>>;
      };
      const [size] = Object.keys(prices.per_image);
      const qualities = prices.per_image[size ?? ''] ?? {};
      const [quality] = Object.keys(qualities);
      qualities[quality ?? ''] = 0;
      return { ...model, prices };
    });
    expect(() => parseConfig(raw, 'tollgate.json')).toThrow(
      new RegExp(
        `models\\.${image}\\.prices\\.per_image\\.[^:]+: is 0, which makes it free of charge`,
      ),
    );
  });

  it('is taken with "free": true on the model', () => {
    const raw = withModel('sim-chat', (model) => ({
      ...model,
      free: true,
      prices: { ...(model['prices'] as object), output_per_million_tokens: 0 },
    }));
    const config = parseConfig(raw, 'tollgate.json');
    expect(config.models[chat]?.prices.output_per_million_tokens).toBe(0);
  });

  it('"free": true with no price at 0 is refused, naming free', () => {
    const raw = withModel('sim-chat', (model) => ({ ...model, free: true }));
    expect(() => parseConfig(raw, 'tollgate.json')).toThrow(
      `models.${chat}.free: is true but no price is 0`,
    );
  });
});
