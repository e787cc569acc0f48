import type { H3Action, H3Role } from '@tollgate/protocol';
import { z } from 'zod';
import type { H3VideoSource } from '../config/schema.js';
import { ApiError, invalidInput } from '../errors/api-error.js';
import { jsonSchemaOf, valuesOnly } from '../errors/input-schema.js';
import { canonicalJson, sha256Hex } from '../util/canonical-json.js';

/** Spec 8: the seconds of video `understand` may watch. */
export const UNDERSTAND_SECONDS = { min: 4, max: 15 } as const;
/** Most reference assets one task may name (a model may allow fewer reference images). */
const MAX_REFERENCES = 16;
const MAX_PROMPT_CHARACTERS = 32_000;
const RATIO = /^([1-9][0-9]{0,3}):([1-9][0-9]{0,3})$/;
const ROLES: readonly H3Role[] = [
  'first_frame',
  'last_frame',
  'reference_image',
  'reference_video',
  'reference_audio',
];

/**
 * The body of `POST /v1/h3/tasks` (spec 4.4) as a schema: types and bounds only. The rules
 * between fields (per action, per operation) are `parseH3Body`'s, so each names its rule.
 */
export const h3Body = z.strictObject({
  operation: valuesOnly(z.enum(['quote', 'submit'])),
  model: z.string().min(1).max(128),
  action: valuesOnly(z.enum(['generate', 'regenerate', 'understand'])),
  prompt: z.string().min(1).max(MAX_PROMPT_CHARACTERS).optional(),
  parameters: z
    .strictObject({
      resolution: z.string().min(1).max(16).optional(),
      ratio: z.string().min(1).max(16).optional(),
      duration: z.int().min(1).max(3_600).optional(),
      generate_audio: z.boolean().optional(),
      watermark: z.boolean().optional(),
    })
    .optional(),
  referenceAssets: z
    .array(
      z.strictObject({
        asset_id: z.string().min(1).max(2_048),
        source: z.string().min(1).max(32),
        role: z.string().min(1).max(32),
      }),
    )
    .max(MAX_REFERENCES)
    .optional(),
  source_task_id: z.string().min(1).max(64).optional(),
  expected_input_digest: z.string().min(1).max(200).optional(),
  expected_price_version: z.string().min(1).max(200).optional(),
  expected_quote_amount: z.int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
});
/** The route's schema, checked by Ajv before the handler runs (and documented). */
export const h3BodySchema = jsonSchemaOf(h3Body);

/** The body as the schema lets it through. */
export type H3Body = z.output<typeof h3Body>;

export interface H3Reference {
  readonly assetId: string;
  readonly role: H3Role;
}

/** An H3 request, parsed: every rule of spec 4.4 that needs no database has held. */
export interface H3Request {
  readonly operation: 'quote' | 'submit';
  readonly model: string;
  readonly action: H3Action;
  readonly prompt: string | undefined;
  /** As given (defaults are the model's, filled in when priced). */
  readonly resolution: string | undefined;
  readonly ratio: string | undefined;
  readonly duration: number | undefined;
  readonly generateAudio: boolean | undefined;
  readonly watermark: boolean | undefined;
  readonly references: readonly H3Reference[];
  readonly sourceTaskId: string | undefined;
  /** `sha256:<hex>` of the canonical input (`inputDigest`). */
  readonly digest: string;
  /** Submit only: the quote echoed (all three required). */
  readonly expected:
    | { readonly digest: string; readonly priceVersion: string; readonly quoteAmount: number }
    | undefined;
}

/**
 * The digest of an H3 input: SHA-256 of its canonical JSON (keys sorted at every depth, no white
 * space), over every field but `operation` and the `expected_*` echo. Key order and white space
 * do not change it; any value does.
 */
export function inputDigest(body: H3Body): string {
  const {
    operation: _operation,
    expected_input_digest: _digest,
    expected_price_version: _version,
    expected_quote_amount: _amount,
    ...input
  } = body;
  return `sha256:${sha256Hex(canonicalJson(input))}`;
}

/** Checks the rules of spec 4.4 that concern the body alone, one 400 naming each. */
export function parseH3Body(body: H3Body): H3Request {
  const parameters = body.parameters ?? {};
  const references = parseReferences(body.referenceAssets ?? []);
  if (parameters.ratio !== undefined && !RATIO.test(parameters.ratio))
    throw invalidInput(
      'parameters.ratio',
      `must be width:height with positive whole numbers (e.g. 16:9), not ${JSON.stringify(parameters.ratio.slice(0, 16))}`,
    );
  checkAction(body, references);
  return {
    operation: body.operation,
    model: body.model,
    action: body.action,
    prompt: body.prompt,
    resolution: parameters.resolution,
    ratio: parameters.ratio,
    duration: parameters.duration,
    generateAudio: parameters.generate_audio,
    watermark: parameters.watermark,
    references,
    sourceTaskId: body.source_task_id,
    digest: inputDigest(body),
    expected: parseExpected(body),
  };
}

function parseReferences(entries: NonNullable<H3Body['referenceAssets']>): H3Reference[] {
  const seen = new Set<string>();
  let frames = { first_frame: 0, last_frame: 0 };
  return entries.map((entry, index) => {
    const at = `referenceAssets.${index}`;
    if (entry.source !== 'asset' || /^[a-z][a-z0-9+.-]*:/i.test(entry.asset_id))
      throw invalidInput(
        `${at}.source`,
        'remote URLs are not sent: upload the file (POST /v1/assets) and name it with "source": "asset" and its asset_id',
      );
    if (!ROLES.includes(entry.role as H3Role))
      throw invalidInput(`${at}.role`, `must be one of ${ROLES.join(', ')}`);
    const role = entry.role as H3Role;
    if (seen.has(entry.asset_id))
      throw invalidInput(`${at}.asset_id`, `asset ${entry.asset_id} is named twice`);
    seen.add(entry.asset_id);
    if (role === 'first_frame' || role === 'last_frame') {
      frames = { ...frames, [role]: frames[role] + 1 };
      if (frames[role] > 1) throw invalidInput(`${at}.role`, `only one ${role} may be given`);
    }
    return { assetId: entry.asset_id, role };
  });
}

/** The per-action rules of spec 4.4 and 8. */
function checkAction(body: H3Body, references: readonly H3Reference[]): void {
  const parameters = body.parameters ?? {};
  if (body.action === 'generate') {
    if (body.prompt === undefined)
      throw invalidInput('prompt', 'generate describes the video to make: prompt is required');
    if (body.source_task_id !== undefined)
      throw invalidInput(
        'source_task_id',
        'generate makes a new video; source_task_id is for regenerate and understand',
      );
    return;
  }
  if (body.action === 'regenerate') {
    if (body.source_task_id === undefined)
      throw invalidInput(
        'source_task_id',
        'regenerate edits a finished video: name your succeeded video task',
      );
    if (body.prompt !== undefined)
      throw invalidInput('prompt', 'is not sent when regenerating from a source task (spec 4.4)');
    if (references.length > 0)
      throw invalidInput(
        'referenceAssets',
        'are not sent when regenerating from a source task (spec 4.4)',
      );
    if (parameters.resolution !== undefined && parameters.resolution !== '2K')
      throw invalidInput('parameters.resolution', 'regenerate allows only 2K (spec 8)');
    if (parameters.generate_audio === false)
      throw invalidInput('parameters.generate_audio', 'must be true for regenerate (spec 8)');
    return;
  }
  checkUnderstand(body, references);
}

function checkUnderstand(body: H3Body, references: readonly H3Reference[]): void {
  const parameters = body.parameters ?? {};
  const { min, max } = UNDERSTAND_SECONDS;
  if (parameters.duration === undefined || parameters.duration < min || parameters.duration > max)
    throw invalidInput(
      'parameters.duration',
      `understand takes an integer duration from ${min} to ${max} seconds (spec 8)`,
    );
  for (const field of ['resolution', 'ratio', 'generate_audio', 'watermark'] as const)
    if (parameters[field] !== undefined)
      throw invalidInput(
        `parameters.${field}`,
        'understand answers text: only duration applies to it',
      );
  const videos = references.filter((reference) => reference.role === 'reference_video');
  const other = references.findIndex((reference) => reference.role !== 'reference_video');
  if (other >= 0)
    throw invalidInput(
      `referenceAssets.${other}.role`,
      'understand watches one video: only reference_video may be given',
    );
  const sources = videos.length + (body.source_task_id === undefined ? 0 : 1);
  if (sources !== 1)
    throw invalidInput(
      body.source_task_id === undefined ? 'referenceAssets' : 'source_task_id',
      'understand watches exactly one video: a source_task_id or one reference_video asset',
    );
}

function parseExpected(body: H3Body): H3Request['expected'] {
  const echoed = {
    expected_input_digest: body.expected_input_digest,
    expected_price_version: body.expected_price_version,
    expected_quote_amount: body.expected_quote_amount,
  };
  if (body.operation === 'quote') {
    const field = Object.entries(echoed).find(([, value]) => value !== undefined)?.[0];
    if (field !== undefined)
      throw invalidInput(field, 'belongs to submit: a quote takes the input alone');
    return undefined;
  }
  const missing = Object.entries(echoed).find(([, value]) => value === undefined)?.[0];
  if (missing !== undefined)
    throw new ApiError(
      'INVALID_INPUT',
      `submit echoes the quote: ${missing} is required (quote first, then send its input_digest, price_version and quoted_amount)`,
      missing,
    );
  return {
    digest: String(body.expected_input_digest),
    priceVersion: String(body.expected_price_version),
    quoteAmount: Number(body.expected_quote_amount),
  };
}

/** The media of an H3 input, read from the caller's assets and source task, and measured. */
export interface H3Media {
  /** The references in the order given, with their measured durations. */
  readonly references: readonly (H3Reference & { readonly durationMs: number })[];
  /** The source task's delivered video (regenerate; understand of a task). */
  readonly source:
    { readonly taskId: string; readonly assetId: string; readonly durationMs: number } | undefined;
  /** Where the input video comes from, for the closed combinations. */
  readonly videoSource: H3VideoSource | undefined;
  readonly referenceImages: number;
  readonly inputAudioMs: number;
  readonly inputVideoMs: number;
  /** Every asset the task uses: kept from deletion while it is unfinished. */
  readonly assetIds: readonly string[];
}
