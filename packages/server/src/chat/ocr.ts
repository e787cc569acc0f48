import { invalidInput } from '../errors/api-error.js';
import type { ChatRequest } from './chat-types.js';

/** Magic numbers of the two formats OCR accepts. */
export function sniffImage(
  bytes: Buffer,
): 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp' | undefined {
  if (
    bytes.length >= 8 &&
    bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
  )
    return 'image/png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff)
    return 'image/jpeg';
  if (
    bytes.length >= 6 &&
    (bytes.subarray(0, 6).toString('latin1') === 'GIF87a' ||
      bytes.subarray(0, 6).toString('latin1') === 'GIF89a')
  )
    return 'image/gif';
  if (
    bytes.length >= 12 &&
    bytes.subarray(0, 4).toString('latin1') === 'RIFF' &&
    bytes.subarray(8, 12).toString('latin1') === 'WEBP'
  )
    return 'image/webp';
  return undefined;
}

/**
 * OCR models only (spec 4.1 item 2): exactly one image, PNG or JPEG, as a data URI whose bytes
 * are what its label says, and no streaming. Each rule has its own message.
 */
export function checkOcrRules(request: ChatRequest): void {
  if (request.stream) throw invalidInput('stream', 'OCR is non-streaming: send stream: false');
  if (request.videoCount > 0)
    throw invalidInput('messages', 'OCR takes exactly one image and no video');
  if (request.images.length !== 1)
    throw invalidInput(
      'messages',
      `OCR takes exactly one image; this request has ${request.images.length}`,
    );
  const image = request.images[0];
  if (image === undefined) return;
  if (image.kind !== 'data_uri' || image.bytes === undefined)
    throw invalidInput(
      `${image.path}.url`,
      'OCR takes the image as a data URI (data:image/png;base64,...), not a URL',
    );
  if (
    image.mediaType !== 'image/png' &&
    image.mediaType !== 'image/jpeg' &&
    image.mediaType !== 'image/jpg'
  ) {
    throw invalidInput(
      `${image.path}.url`,
      `OCR takes PNG or JPEG only; the data URI says ${image.mediaType ?? 'nothing'}`,
    );
  }
  const actual = sniffImage(image.bytes);
  const label = image.mediaType === 'image/jpg' ? 'image/jpeg' : image.mediaType;
  if (actual !== label)
    throw invalidInput(
      `${image.path}.url`,
      `the data URI says ${label} but its bytes are ${actual ?? 'not a PNG or JPEG image'}`,
    );
}
