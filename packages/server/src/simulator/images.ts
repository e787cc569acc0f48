import { randomBytes } from 'node:crypto';
import { characterCount } from '../util/characters.js';
import { LRUCache } from 'lru-cache';
import { BadRequest } from './embeddings.js';
import { SIMULATOR_LIMITS } from './limits.js';
import { drawScanlines, paletteOf } from './picture.js';
import { encodePng } from './png.js';

/** `POST /v1/images/generations` as the OpenAI Images API takes it. */
export interface ImageRequest {
  model: string;
  prompt: string;
  n: number;
  width: number;
  height: number;
  responseFormat: 'b64_json' | 'url';
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Parses `WxH` with each side in `range` (and even when `even`); throws `BadRequest` naming `field`. */
export function parseSize(
  value: unknown,
  field: string,
  range: { min: number; max: number },
  even = false,
): { width: number; height: number } {
  const match = typeof value === 'string' ? /^(\d{1,5})x(\d{1,5})$/.exec(value) : null;
  const width = Number(match?.[1]);
  const height = Number(match?.[2]);
  const fits = (side: number) =>
    side >= range.min && side <= range.max && (!even || side % 2 === 0);
  if (match === null || !fits(width) || !fits(height))
    throw new BadRequest(
      `${field} must be WIDTHxHEIGHT with each side from ${range.min} to ${range.max}${even ? ', even' : ''}`,
    );
  return { width, height };
}

/** The prompt, a non-empty string within the simulator's prompt limit. */
export function parsePrompt(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '')
    throw new BadRequest('prompt must be a non-empty string');
  if (characterCount(value) > SIMULATOR_LIMITS.promptCharacters)
    throw new BadRequest(`prompt must be at most ${SIMULATOR_LIMITS.promptCharacters} characters`);
  return value;
}

export function parseImageBody(body: unknown): ImageRequest {
  if (!isObject(body)) throw new BadRequest('body must be a JSON object');
  const { model, n = 1, size = '1024x1024', response_format: format = 'b64_json' } = body;
  if (typeof model !== 'string' || model === '') throw new BadRequest('model is required');
  const prompt = parsePrompt(body['prompt']);
  const most = SIMULATOR_LIMITS.imagesPerRequest;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > most)
    throw new BadRequest(`n must be an integer from 1 to ${most}`);
  if (format !== 'b64_json' && format !== 'url')
    throw new BadRequest('response_format must be b64_json or url');
  if (body['quality'] !== undefined && typeof body['quality'] !== 'string')
    throw new BadRequest('quality must be a string');
  const { width, height } = parseSize(
    size === 'auto' ? '1024x1024' : size,
    'size',
    SIMULATOR_LIMITS.imageSide,
  );
  return { model, prompt, n, width, height, responseFormat: format };
}

/**
 * Draws and answers images, one picture at a time across the whole simulator: a 2048 × 2048
 * picture is 12 MiB of raw scanlines before compression, so concurrent requests wait in line
 * instead of multiplying that. Files answered as URLs are kept in a bounded LRU.
 */
export class ImageService {
  private queue: Promise<unknown> = Promise.resolve();
  private readonly files = new LRUCache<string, Buffer>({
    max: SIMULATOR_LIMITS.imageFiles,
    maxSize: SIMULATOR_LIMITS.imageFileBytes,
    sizeCalculation: (bytes) => Math.max(1, bytes.length),
  });

  constructor(
    private readonly baseUrl: () => string,
    private readonly now: () => number,
  ) {}

  /**
   * The OpenAI Images response with `count` pictures (the directive may deliver fewer than
   * `n`). Picture i is drawn from the prompt and its position, so the pictures of one answer
   * differ from each other, and the same request gets the same bytes again.
   */
  async generate(request: ImageRequest, cleanedPrompt: string, count: number) {
    const data: ({ b64_json: string } | { url: string })[] = [];
    for (let index = 0; index < count; index += 1) {
      const png = await this.draw(
        index === 0 ? cleanedPrompt : `${cleanedPrompt} #${index + 1}`,
        request,
      );
      if (request.responseFormat === 'b64_json') {
        data.push({ b64_json: png.toString('base64') });
        continue;
      }
      const id = `img_${randomBytes(12).toString('hex')}`;
      this.files.set(id, png);
      data.push({ url: `${this.baseUrl()}/v1/images/files/${id}.png` });
    }
    return { created: Math.floor(this.now() / 1000), data, usage: { images: count } };
  }

  /** A stored file answered as a URL, until it is evicted. */
  file(id: string): Buffer | undefined {
    return this.files.get(id);
  }

  /** Same seed and size, same bytes. */
  private draw(seed: string, request: ImageRequest): Promise<Buffer> {
    const work = () =>
      encodePng(
        request.width,
        request.height,
        drawScanlines(paletteOf(seed), request.width, request.height),
      );
    const result = this.queue.then(work, work);
    this.queue = result.catch(() => undefined);
    return result;
  }
}
