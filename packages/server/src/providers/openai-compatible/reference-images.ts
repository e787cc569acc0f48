import type { TaskInput } from '../task-provider.js';

/**
 * The reference images of a task as the JSON field `reference_images` (data URIs), or nothing.
 * OpenAI's own image-edit and video-reference endpoints take multipart files instead; an
 * adapter for them would send the same bytes that way.
 */
export function referenceImages(input: TaskInput): { reference_images?: string[] } {
  if (input.references.length === 0) return {};
  return {
    reference_images: input.references.map(
      (reference) => `data:${reference.mediaType};base64,${reference.bytes.toString('base64')}`,
    ),
  };
}
