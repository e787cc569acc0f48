import type { z } from 'zod';
import { configSchema, modelSchema } from './schema.js';

/** One problem of a configuration file: the dotted path's parts and what is wrong there. */
export interface ConfigIssue {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

/**
 * The cross-field problems (duplicate model ids, unknown upstreams, price rules: the schema's
 * `superRefine`) of a file that also has field errors. zod runs an object's refinements only
 * once all of its fields parsed, so without this a bad upstream name would show only after the
 * type errors were fixed, one pass at a time.
 *
 * Best effort, with the schema's own rules: the file is parsed again with its broken parts taken
 * out — every upstream becomes a neutral simulator one (these rules read only the names), a
 * model's broken fields are dropped (their defaults apply), a model still broken after that is
 * left out — and only the rules' (custom) issues are kept, at the model's index in the file. A
 * model that lost fields keeps only its `id` and `upstream` issues: its price rules could fail
 * because of the loss alone.
 */
export function crossFieldIssues(raw: unknown): ConfigIssue[] {
  if (!isRecord(raw) || !isRecord(raw['upstreams']) || !Array.isArray(raw['models'])) return [];
  const upstreams = Object.fromEntries(
    Object.keys(raw['upstreams']).map((name) => [name, { kind: 'simulator' }]),
  );
  const kept: { model: unknown; index: number; repaired: boolean }[] = [];
  (raw['models'] as unknown[]).forEach((model, index) => {
    const usable = withoutBrokenFields(model);
    if (usable !== undefined) kept.push({ ...usable, index });
  });
  const result = configSchema.safeParse({ upstreams, models: kept.map((entry) => entry.model) });
  if (result.success) return [];
  return result.error.issues.flatMap((issue) => {
    const entry = issue.path[0] === 'models' ? kept[Number(issue.path[1])] : undefined;
    if (issue.code !== 'custom' || entry === undefined) return [];
    const field = issue.path[2];
    if (entry.repaired && field !== 'id' && field !== 'upstream') return [];
    return [{ path: ['models', entry.index, ...issue.path.slice(2)], message: issue.message }];
  });
}

/** The model with the fields it cannot parse dropped; `undefined` if it still does not parse. */
function withoutBrokenFields(model: unknown): { model: unknown; repaired: boolean } | undefined {
  const first = modelSchema.safeParse(model);
  if (first.success) return { model, repaired: false };
  if (!isRecord(model)) return undefined;
  const broken = new Set(first.error.issues.flatMap(brokenFields));
  const rest = Object.fromEntries(Object.entries(model).filter(([field]) => !broken.has(field)));
  return modelSchema.safeParse(rest).success ? { model: rest, repaired: true } : undefined;
}

/** The model's own fields an issue is about (an unknown key's issue sits on the model itself). */
function brokenFields(issue: z.core.$ZodIssue): PropertyKey[] {
  if (issue.code === 'unrecognized_keys') return issue.keys;
  return issue.path[0] === undefined ? [] : [issue.path[0]];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
