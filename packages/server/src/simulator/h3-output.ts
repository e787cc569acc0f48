import { createHash } from 'node:crypto';
import { mp4InfoOfBytes } from '../assets/mp4-duration.js';
import { BadRequest } from './embeddings.js';
import type { H3Request, Resolution } from './h3-request.js';
import { SIMULATOR_LIMITS } from './limits.js';
import { countTokens } from './tokens.js';
import type { VideoSpec } from './video-encoder.js';

/** What a finished H3 job delivers: a video to encode, or (understand) a text and its tokens. */
export type H3Output =
  | { readonly kind: 'video'; readonly spec: VideoSpec; readonly askedSeconds: number }
  | {
      readonly kind: 'text';
      readonly text: string;
      readonly promptTokens: number;
      readonly completionTokens: number;
    };

/**
 * The short side of the simulated picture per resolution: small (pixels, even), so encoding
 * stays cheap; the resolution still shows in the file's size.
 */
export const SHORT_SIDE: Readonly<Record<Resolution, number>> = {
  '480p': 96,
  '720p': 128,
  '1080p': 160,
  '2K': 192,
};
export const DEFAULT_RESOLUTION: Resolution = '720p';
export const DEFAULT_RATIO = '16:9';
export const DEFAULT_SECONDS = 5;
/** Understand reports this many prompt tokens per second of video watched (beside the prompt's). */
export const TOKENS_PER_SECOND_WATCHED = 10;

/**
 * The picture size: the resolution's short side, the long side from the ratio (rounded to even,
 * at most `SIMULATOR_LIMITS.videoSide.max`), landscape when W ≥ H.
 */
export function videoSize(
  resolution: Resolution,
  ratio: string,
): { width: number; height: number } {
  const [across = 16, down = 9] = ratio.split(':').map(Number);
  const short = SHORT_SIDE[resolution];
  const exact = (short * Math.max(across, down)) / Math.min(across, down);
  const long = Math.min(SIMULATOR_LIMITS.videoSide.max, 2 * Math.round(exact / 2));
  return across >= down ? { width: long, height: short } : { width: short, height: long };
}

/**
 * What the request will deliver, computed at submission (so a job keeps digests and a short
 * text, never the references). Throws `BadRequest` when `understand` is not given an MP4.
 */
export async function planOutput(request: H3Request): Promise<H3Output> {
  if (request.action === 'understand') return understand(request);
  const { width, height } = videoSize(
    request.resolution ?? DEFAULT_RESOLUTION,
    request.ratio ?? DEFAULT_RATIO,
  );
  const askedSeconds = request.duration ?? DEFAULT_SECONDS;
  // Regenerate derives from the source video alone (its SHA-256): same source bytes, same file.
  const pictureSeed =
    request.action === 'regenerate' ? sourceOf(request).digest : generateSeed(request);
  return {
    kind: 'video',
    askedSeconds,
    spec: {
      pictureSeed,
      width,
      height,
      seconds: request.directives.deliverSeconds ?? askedSeconds,
    },
  };
}

/** SHA-256 of the prompt (directives removed), then `\n<role>:<sha256>` per reference in order. */
function generateSeed(request: H3Request): string {
  const seed = createHash('sha256').update(request.prompt, 'utf8');
  for (const reference of request.references)
    seed.update(`\n${reference.role}:${reference.digest}`);
  return seed.digest('hex');
}

const COLOURS = ['red', 'blue', 'green', 'golden', 'grey', 'violet', 'white', 'amber'];
const SUBJECTS = ['fox', 'river', 'city', 'forest', 'robot', 'ship', 'garden', 'mountain'];
const MOTIONS = [
  'drifting',
  'turning',
  'glowing',
  'moving',
  'resting',
  'rising',
  'fading',
  'waving',
];
const TIMES = [
  'at dawn',
  'at noon',
  'at dusk',
  'at night',
  'in rain',
  'in fog',
  'in snow',
  'in wind',
];

/**
 * A deterministic description of the one `reference_video`: its length and size read from the
 * MP4's headers, its digest, and a "summary" drawn from the digest of the source and the prompt.
 * Tokens: the prompt's plus `TOKENS_PER_SECOND_WATCHED` per second asked; the text's.
 */
async function understand(request: H3Request): Promise<H3Output> {
  const source = sourceOf(request);
  const info = await mp4InfoOfBytes(source.bytes);
  if (info.durationSeconds === undefined)
    throw new BadRequest('the reference_video must be an MP4 with a duration');
  const watched = request.duration ?? DEFAULT_SECONDS;
  const pick = createHash('sha256').update(source.digest).update(request.prompt, 'utf8').digest();
  const word = (list: readonly string[], index: number) => list[(pick[index] ?? 0) % list.length];
  const size =
    info.width === undefined || info.height === undefined
      ? 'of unknown size'
      : `${info.width}x${info.height}`;
  const text =
    `A ${Number(info.durationSeconds.toFixed(2))}-second video, ${size}, ` +
    `sha256 ${source.digest.slice(0, 12)}; ${watched} seconds watched. ` +
    `Summary ${pick.toString('hex').slice(0, 8)}: a ${word(COLOURS, 0)} ${word(SUBJECTS, 1)} ` +
    `${word(MOTIONS, 2)} ${word(TIMES, 3)}.`;
  return {
    kind: 'text',
    text,
    promptTokens: countTokens(request.prompt) + TOKENS_PER_SECOND_WATCHED * watched,
    completionTokens: countTokens(text),
  };
}

function sourceOf(request: H3Request) {
  const source = request.references.find((reference) => reference.role === 'reference_video');
  // parseH3Body guarantees one for regenerate and understand.
  if (source === undefined) throw new BadRequest(`${request.action} needs a reference_video`);
  return source;
}
