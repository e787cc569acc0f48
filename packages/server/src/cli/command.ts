import { usageError } from './arguments.js';
import type { OptionName, OptionValues } from './arguments.js';
import type { CliContext } from './context.js';

/** What a command printed: JSON (`body`), or text written as it is read; and the exit code. */
export interface Outcome {
  readonly body: unknown;
  readonly exitCode: number;
  readonly text?: AsyncIterable<string>;
  /** The process keeps running (serve, sim). */
  readonly runs?: boolean;
}

export interface CommandInput {
  /** The positionals after the command's own words. */
  readonly args: readonly string[];
  readonly values: OptionValues;
  readonly context: CliContext;
  readonly env: NodeJS.ProcessEnv;
  readonly write: (text: string) => void;
}

/**
 * One command: its usage line (its words, then its arguments), the positionals it takes, the
 * options it accepts, and what it runs. Each `run` imports what it needs when it runs, so a
 * command never loads another's modules.
 */
export interface Command {
  readonly usage: string;
  readonly note?: string;
  /** Positional argument names, in order; `[]` for none. */
  readonly args: readonly string[];
  readonly options: readonly OptionName[];
  run(input: CommandInput): Promise<Outcome>;
}

export type CommandGroup = Readonly<Record<string, Command>>;

export const ok = (body: unknown): Outcome => ({ body, exitCode: 0 });

/** The positional `name` at `index`; missing or empty is a usage error naming it. */
export function arg(input: CommandInput, index: number, name: string): string {
  const value = input.args[index];
  if (value === undefined || value === '')
    throw usageError(`${name} is missing (run tollgate --help)`, name);
  return value;
}

export function text(value: string | boolean | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function integerOption(value: string | boolean | undefined): number | undefined {
  return typeof value === 'string' ? Number(value) : undefined;
}

/** `--json`'s value: a JSON document, else a usage error naming the option. */
export function jsonOption(value: string | boolean | undefined): unknown {
  if (typeof value !== 'string') throw usageError('--json is required', 'json');
  try {
    return JSON.parse(value) as unknown;
  } catch (error) {
    throw usageError(`--json is not valid JSON: ${(error as Error).message}`, 'json');
  }
}
