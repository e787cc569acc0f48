import { parseArgs } from 'node:util';
import { ApiError } from '../errors/api-error.js';

/** Every option any command takes, with its type; each command says which of them it accepts. */
export const OPTIONS = {
  email: { type: 'string' },
  amount: { type: 'string' },
  reference: { type: 'string' },
  kind: { type: 'string' },
  models: { type: 'string' },
  'expires-at': { type: 'string' },
  'expire-old-in': { type: 'string' },
  name: { type: 'string' },
  json: { type: 'string' },
  code: { type: 'string' },
  capture: { type: 'string' },
  release: { type: 'boolean' },
  all: { type: 'boolean' },
  force: { type: 'boolean' },
  status: { type: 'string' },
  account: { type: 'string' },
  role: { type: 'string' },
  attach: { type: 'string' },
  state: { type: 'string' },
  reason: { type: 'string' },
  port: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  format: { type: 'string' },
  host: { type: 'string' },
  q: { type: 'string' },
  'id-prefix': { type: 'string' },
  limit: { type: 'string' },
  after: { type: 'string' },
  window: { type: 'string' },
  remove: { type: 'boolean' },
  'allowed-ips': { type: 'string' },
  idempotency: { type: 'string' },
  'allow-any': { type: 'boolean' },
  origin: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const;

export type OptionName = keyof typeof OPTIONS;
export type OptionValues = Partial<Record<OptionName, string | boolean>>;

export interface ParsedArguments {
  readonly positionals: readonly string[];
  readonly values: OptionValues;
  /** The options as written, in order (to refuse one the command does not take, by name). */
  readonly given: readonly OptionName[];
}

/** The CLI's usage errors: the JSON error shape on stderr, exit 1, like every other error. */
export function usageError(message: string, param?: string): ApiError {
  return new ApiError('INVALID_INPUT', message, param);
}

/**
 * Parses argv strictly. Node's own messages for a bad option are prose with quoting meant for a
 * shell; the CLI answers in its JSON error shape instead, naming the option.
 */
export function parseArguments(argv: readonly string[]): ParsedArguments {
  try {
    const { values, positionals, tokens } = parseArgs({
      args: [...argv],
      options: OPTIONS,
      allowPositionals: true,
      strict: true,
      tokens: true,
    });
    const given = tokens.flatMap((token) => (token.kind === 'option' ? [token.name] : []));
    return { positionals, values, given };
  } catch (error) {
    throw explained(argv, error);
  }
}

/** Why strict parsing refused `argv`, found again by a lenient pass that keeps the tokens. */
function explained(argv: readonly string[], error: unknown): ApiError {
  const { tokens } = parseArgs({
    args: [...argv],
    options: OPTIONS,
    allowPositionals: true,
    strict: false,
    tokens: true,
  });
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    const spec = (OPTIONS as Record<string, { type: 'string' | 'boolean' } | undefined>)[
      token.name
    ];
    const option = token.rawName;
    if (spec === undefined)
      return usageError(`unknown option ${option}; run tollgate --help`, token.name);
    if (spec.type === 'string' && token.value === undefined)
      return usageError(`${option} needs a value`, token.name);
    if (spec.type === 'string' && token.inlineValue === false && token.value?.startsWith('-'))
      return usageError(
        `${option} needs a value (got ${token.value}; write ${option}=VALUE for a value starting with -)`,
        token.name,
      );
    if (spec.type === 'boolean' && token.value !== undefined)
      return usageError(`${option} takes no value`, token.name);
  }
  return usageError(error instanceof Error ? error.message : String(error));
}
