import { invalidInput } from '../errors/api-error.js';
import {
  guardedFetch,
  GuardedFetchError,
  type GuardedFetchDeps,
  networkDeps,
} from '../net/guarded-fetch.js';
import { sniffImage } from './ocr.js';

const MAX_IMAGE_BYTES = 20 * 1024 * 1024;

/**
 * For models with `image_urls` enabled: fetches every https image URL through the guarded fetch
 * and returns a copy of the messages with each URL replaced by a data URI of the checked bytes,
 * so the upstream never fetches a caller-chosen URL itself. Anything else is left as it was.
 */
export async function inlineImageUrls(
  messages: readonly Record<string, unknown>[],
  deps: GuardedFetchDeps = networkDeps,
): Promise<Record<string, unknown>[]> {
  return Promise.all(
    messages.map(async (message, messageIndex) => {
      const content = message['content'];
      if (!Array.isArray(content)) return message;
      const parts = await Promise.all(
        content.map(async (part: unknown, partIndex) => {
          const image = (part as { image_url?: { url?: unknown } }).image_url;
          const url = image?.url;
          if (typeof url !== 'string' || !url.startsWith('https://')) return part;
          const path = `messages.${messageIndex}.content.${partIndex}.image_url.url`;
          try {
            const fetched = await guardedFetch(url, { maxBytes: MAX_IMAGE_BYTES }, deps);
            const mediaType = sniffImage(fetched.bytes);
            if (mediaType === undefined)
              throw invalidInput(path, 'the URL did not return a PNG, JPEG, GIF or WebP image');
            return {
              ...(part as object),
              image_url: {
                ...image,
                url: `data:${mediaType};base64,${fetched.bytes.toString('base64')}`,
              },
            };
          } catch (error) {
            if (error instanceof GuardedFetchError)
              throw invalidInput(path, `image URL refused: ${error.message}`);
            if (error instanceof TypeError)
              throw invalidInput(path, 'the image URL could not be fetched');
            throw error;
          }
        }),
      );
      return { ...message, content: parts };
    }),
  );
}
