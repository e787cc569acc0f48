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
    {
      id: 'sim-h3',
      upstream: 'simulator',
      families: ['h3'],
      // Video actions: micro-yuan per second of input audio + input video + output, by output
      // resolution (regenerate is 2K with audio). Understand: per 1M tokens. The first 5
      // reference images are free (spec 8), each further one costs per_reference_image.
      prices: {
        h3_per_second: { '480p': 20_000, '720p': 40_000, '1080p': 80_000, '2K': 120_000 },
        h3_per_second_with_audio: {
          '480p': 30_000,
          '720p': 60_000,
          '1080p': 110_000,
          '2K': 160_000,
        },
        per_reference_image: 5_000,
        input_per_million_tokens: 2_000_000,
        output_per_million_tokens: 8_000_000,
      },
      video_seconds: [5, 4, 8, 10],
      generate_audio: true,
      max_reference_images: 8,
      max_output_tokens: 1_024,
      video_input_tokens: 8_000,
      h3_upstream_models: {
        generate: 'sim-h3-generate',
        regenerate: 'sim-h3-regenerate',
        understand: 'sim-h3-understand',
      },
      // Closed so that each kind of closed combination is exercised (spec 4.4).
      h3_closed: [
        {
          action: 'generate',
          reference_roles: ['reference_audio'],
          reason:
            'audio references (role reference_audio) are not open for generate on sim-h3: leave the audio out',
        },
        {
          action: 'regenerate',
          video_sources: ['regenerated'],
          reason:
            're-editing a work is not open: a regenerated video cannot be regenerated again; regenerate the original generate task',
        },
        {
          action: 'understand',
          video_sources: ['video_task'],
          reason:
            'understanding a /v1/videos result is not open on sim-h3: understand an H3 video (source_task_id) or an uploaded video (reference_video)',
        },
      ],
    },
  ],
};
