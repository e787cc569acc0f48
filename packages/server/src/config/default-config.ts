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
      id: 'sim-chat',
      upstream: 'simulator',
      families: ['chat'],
      combinations: [
        ['streaming', 'tools', 'thinking'],
        ['streaming', 'structured_output'],
        ['tools', 'structured_output'],
      ],
      prices: {
        input_per_million_tokens: 2_000_000,
        output_per_million_tokens: 8_000_000,
        reasoning_per_million_tokens: 8_000_000,
        cached_input_per_million_tokens: 500_000,
      },
      max_output_tokens: 4_096,
    },
    {
      id: 'sim-vision',
      upstream: 'simulator',
      families: ['chat'],
      combinations: [['image_input', 'video_input', 'streaming']],
      prices: { input_per_million_tokens: 3_000_000, output_per_million_tokens: 9_000_000 },
      image_input_tokens: 1_500,
      video_input_tokens: 8_000,
    },
    {
      id: 'sim-ocr',
      upstream: 'simulator',
      families: ['chat', 'ocr'],
      combinations: [['image_input']],
      prices: { input_per_million_tokens: 1_000_000, output_per_million_tokens: 2_000_000 },
      max_output_tokens: 2_048,
    },
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
