import { ConfigError } from '../config/load.js';

/** `human`: a start-up summary and readable lines for a person; `json`: one JSON object a line. */
export type LogFormat = 'json' | 'human';

export interface LogOptions {
  /** A pino level name. */
  readonly level: string;
  readonly format: LogFormat;
}

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const FORMATS: readonly LogFormat[] = ['json', 'human'];

/**
 * `LOG_LEVEL` and `LOG_FORMAT` as `main.ts` read them (empty means unset). Without
 * `LOG_FORMAT`, a terminal gets the human format and anything else (a file, a pipe, a log
 * collector) gets JSON lines, so machines never have to ask for them. Throws a `ConfigError`
 * naming the variable for a value it does not know.
 */
export function parseLogOptions(
  values: { readonly level: string | undefined; readonly format: string | undefined },
  stdoutIsTerminal: boolean,
): LogOptions {
  const level = values.level === undefined || values.level === '' ? 'info' : values.level;
  if (!LEVELS.includes(level))
    throw new ConfigError(
      `invalid environment variable LOG_LEVEL: must be one of ${LEVELS.join(', ')}`,
    );
  const format = values.format === undefined || values.format === '' ? undefined : values.format;
  if (format === undefined) return { level, format: stdoutIsTerminal ? 'human' : 'json' };
  if (!(FORMATS as readonly string[]).includes(format))
    throw new ConfigError(`invalid environment variable LOG_FORMAT: must be json or human`);
  return { level, format: format as LogFormat };
}
