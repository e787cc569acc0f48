import type { ConfigFile } from './schema.js';

/**
 * The embedded default: every `sim-*` model served by the built-in simulator on loopback, so a
 * fresh `npm start` works offline. Prices are illustrative (micro-yuan per 1M tokens, per image,
 * per second of video).
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
    {
      id: 'sim-image',
      upstream: 'simulator',
      families: ['images'],
      // Micro-yuan per image, by size then quality; the first reference image is free.
      prices: {
        per_image: {
          '256x256': { standard: 10_000, hd: 20_000 },
          '512x512': { standard: 20_000, hd: 40_000 },
          '1024x1024': { standard: 40_000, hd: 80_000 },
        },
        per_reference_image: 5_000,
        free_reference_images: 1,
      },
      image_qualities: ['standard', 'hd'],
      max_images: 4,
      max_reference_images: 4,
    },
    {
      id: 'sim-video',
      upstream: 'simulator',
      families: ['videos'],
      // Micro-yuan per second of output video, by size (with audio dearer).
      prices: {
        per_second: { '320x240': 20_000, '640x360': 50_000, '1280x720': 100_000 },
        per_second_with_audio: { '320x240': 30_000, '640x360': 70_000, '1280x720': 140_000 },
        per_reference_image: 10_000,
      },
      video_sizes: ['640x360', '320x240', '1280x720'],
      video_seconds: [1, 2, 4, 8],
      generate_audio: true,
      max_reference_images: 4,
    },
  ],
};
