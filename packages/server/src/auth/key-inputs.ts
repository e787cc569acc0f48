/**
 * What a caller may send to create, rotate or change a key (KeyService's inputs, shared by the
 * admin API, the console and the CLI): parsed at the service's entry (errors/input-schema.ts).
 */
import { z } from 'zod';
import { optionalTime } from '../accounts/account-service.js';
import { requiredAs } from '../errors/input-schema.js';
import type { KeyIdempotency, KeyKind } from '../store/schema.js';
import { parseCidrList } from '../util/ip-allowlist.js';

/**
 * `allowed_ips` as given: a list of CIDR blocks (the list's rule is util/ip-allowlist.ts
 * `parseCidrList`, shared with `server.trusted_proxies`), as stored (JSON of its canonical
 * blocks); absent or `null` allows every address (null).
 */
const allowedIpsInput = z
  .unknown()
  .optional()
  .transform((value, context) => {
    if (value === undefined || value === null) return null;
    const parsed = parseCidrList(value);
    if ('problem' in parsed) {
      context.addIssue({ code: 'custom', message: parsed.problem, input: value });
      return z.NEVER;
    }
    return JSON.stringify(parsed.cidrs);
  });

const KEY_KINDS = ['personal', 'service'] as const satisfies readonly KeyKind[];
const IDEMPOTENCY = ['required', 'optional'] as const satisfies readonly KeyIdempotency[];
const NOT_MODEL_IDS = 'must be an array of model ids';
const NOT_A_NAME = 'must be a string of at most 100 characters';

/**
 * A new key (`KeyService.create`): each field optional, `null` as absent. Whether each model
 * is configured and whether `expires_at` is in the future are the service's own checks (the
 * configuration's, the clock's).
 */
export const keyInput = z.object({
  kind: z
    .enum(KEY_KINDS, { error: 'must be personal or service' })
    .nullish()
    .transform((kind) => kind ?? 'personal'),
  idempotency: z
    .enum(IDEMPOTENCY, { error: 'must be required or optional' })
    .nullish()
    .transform((idempotency) => idempotency ?? 'required'),
  // The list is refused whole (`models`, not `models.2`), duplicates dropped.
  models: z
    .array(z.unknown(), { error: NOT_MODEL_IDS })
    .nullish()
    .transform((models, context) => {
      if (models === undefined || models === null) return null;
      const ids = models.filter((model) => typeof model === 'string');
      if (ids.length === models.length) return [...new Set(ids)];
      context.addIssue({ code: 'custom', message: NOT_MODEL_IDS, input: models });
      return z.NEVER;
    }),
  name: z
    .string({ error: NOT_A_NAME })
    .max(100, { error: NOT_A_NAME })
    .nullish()
    .transform((name) => name ?? null),
  expires_at: optionalTime,
  allowed_ips: allowedIpsInput,
});

/** The longest an old key keeps working after a rotation. */
const MAX_ROTATION_OVERLAP_SECONDS = 7 * 24 * 3600;
const NOT_AN_OVERLAP = `must be an integer from 0 to ${MAX_ROTATION_OVERLAP_SECONDS} (7 days)`;

/** A rotation: how long the old key keeps working, none by default. */
export const rotationInput = z.object({
  expire_old_in_seconds: z
    .int({ error: NOT_AN_OVERLAP })
    .min(0, { error: NOT_AN_OVERLAP })
    .max(MAX_ROTATION_OVERLAP_SECONDS, { error: NOT_AN_OVERLAP })
    .default(0),
});

/** A key changed in place: its `allowed_ips`, given (`null` allows every address again). */
export const keyUpdateInput = z.object({
  allowed_ips: requiredAs('is required (null allows every address)', allowedIpsInput),
});
