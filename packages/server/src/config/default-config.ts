import type { ConfigFile } from './schema.js';

/**
 * The embedded default: every `sim-*` model served by the built-in simulator on loopback, so a
 * fresh `npm start` works offline. Prices are illustrative (micro-yuan per 1M tokens).
 */
export const defaultConfig: ConfigFile = {
  upstreams: {
    simulator: { kind: 'simulator' },
  },
  models: [
    {
      id: 'sim-embed',
      upstream: 'simulator',
      families: ['embeddings'],
      prices: { input_per_million_tokens: 500_000 },
      default_dimensions: 256,
      max_dimensions: 4096,
    },
    {
      id: 'sim-rerank',
      upstream: 'simulator',
      families: ['rerank'],
      prices: { input_per_million_tokens: 800_000 },
    },
  ],
};
