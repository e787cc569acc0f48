import { readFileSync } from 'node:fs';
import { ApiError } from '../errors/api-error.js';
import { parseArguments, usageError, type OptionName } from './arguments.js';
import { COMMAND_GROUPS, SINGLE_COMMANDS, usageLines, type Command } from './commands.js';
import { CliContext } from './context.js';

// Only the argument parser and the command table load at start: each command imports what it
// uses when it runs (commands.ts), so `--version`, a usage error or a one-table read does not
// pay for the whole server.

const EVERY_COMMAND = [
  ...Object.values(SINGLE_COMMANDS).slice(0, 2),
  ...Object.values(COMMAND_GROUPS.ledger ?? {}),
  ...Object.values(COMMAND_GROUPS.accounts ?? {}),
  ...Object.values(SINGLE_COMMANDS).slice(2),
  ...Object.entries(COMMAND_GROUPS)
    .filter(([group]) => group !== 'ledger' && group !== 'accounts')
    .flatMap(([, group]) => Object.values(group)),
];

const USAGE = `tollgate <command> — every command prints JSON; errors are {"error": {...}} on stderr, exit 1 (docs/admin.md)

  tollgate --version
${usageLines(EVERY_COMMAND)}
`;

/** Options every command takes. */
const GLOBAL_OPTIONS: readonly OptionName[] = ['help', 'version'];

interface Output {
  write(text: string): void;
}

/** What the command line names: a command, a group's usage, or the whole usage. */
type Resolved =
  | {
      readonly kind: 'command';
      readonly name: string;
      readonly command: Command;
      readonly args: readonly string[];
    }
  | { readonly kind: 'usage'; readonly text: string };

function resolve(positionals: readonly string[]): Resolved {
  const [first, second] = positionals;
  if (first === undefined) return { kind: 'usage', text: USAGE };
  const single = SINGLE_COMMANDS[first];
  if (single !== undefined)
    return { kind: 'command', name: first, command: single, args: positionals.slice(1) };
  const group = COMMAND_GROUPS[first];
  if (group === undefined) throw usageError(`unknown command "${first}"; run tollgate --help`);
  if (second === undefined)
    return {
      kind: 'usage',
      text: `tollgate ${first} <subcommand>: ${Object.keys(group).join(', ')}\n\n${usageLines(Object.values(group))}\n`,
    };
  const command = group[second];
  if (command === undefined)
    throw usageError(
      `unknown command "${first} ${second}"; ${first} has: ${Object.keys(group).join(', ')}`,
    );
  return { kind: 'command', name: `${first} ${second}`, command, args: positionals.slice(2) };
}

/** An option the command does not take, or a positional it has no place for, is refused. */
function checkFits(
  name: string,
  command: Command,
  given: readonly OptionName[],
  args: readonly string[],
) {
  for (const option of given) {
    if (!command.options.includes(option) && !GLOBAL_OPTIONS.includes(option))
      throw usageError(
        `--${option} is not an option of "${name}" (tollgate ${command.usage})`,
        option,
      );
  }
  const extra = args[command.args.length];
  if (extra !== undefined)
    throw usageError(`unexpected argument "${extra}" (tollgate ${command.usage})`);
}

function version(): string {
  // dist/cli/main.js and src/cli/main.ts both sit two levels under the package.
  const manifest = JSON.parse(
    readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
  ) as { version: string };
  return manifest.version;
}

/**
 * Runs one CLI command; returns the exit code (-1: the command keeps running, as `serve`).
 * Output is JSON on `out`; every error is `{"error": {"code", "message"}}` on `err`, exit 1.
 */
export async function runCli(
  argv: string[],
  env: NodeJS.ProcessEnv,
  out: Output,
  err: Output,
): Promise<number> {
  const context = new CliContext(env);
  let keepsRunning = false;
  try {
    const { positionals, values, given } = parseArguments(argv);
    if (values.version === true) {
      out.write(`${JSON.stringify({ version: version() }, null, 2)}\n`);
      return 0;
    }
    const resolved = resolve(positionals);
    if (resolved.kind === 'usage') {
      out.write(resolved.text);
      // Asking for help succeeds; a command line that stops short of a command does not.
      return values.help === true ? 0 : 2;
    }
    const { name, command, args } = resolved;
    if (values.help === true) {
      out.write(`${usageLines([command])}\n`);
      return 0;
    }
    checkFits(name, command, given, args);
    const result = await command.run({
      args,
      values,
      context,
      env,
      write: (text) => out.write(text),
    });
    if (result.runs === true) {
      keepsRunning = true;
      return -1;
    }
    if (result.text === undefined) out.write(`${JSON.stringify(result.body, null, 2)}\n`);
    else for await (const chunk of result.text) out.write(chunk);
    return result.exitCode;
  } catch (error) {
    // `serve` fails the way `npm start` does (cliMain prints its one line).
    if (argv[0] === 'serve' && !(error instanceof ApiError)) throw error;
    err.write(`${JSON.stringify(await errorBody(error))}\n`);
    return 1;
  } finally {
    if (!keepsRunning) await context.close();
  }
}

/**
 * The JSON error of a failed command. A refusal is the service's own code and message; a
 * command that could not start (a bad configuration, an unreachable database) is
 * `COMMAND_FAILED` with the line `npm start` prints for the same cause.
 */
async function errorBody(
  error: unknown,
): Promise<{ error: { code: string; message: string; param?: string } }> {
  // The HTTP error shape (param names the field or option when there is one).
  if (error instanceof ApiError)
    return {
      error: {
        code: error.code,
        message: error.message,
        ...(error.param === undefined ? {} : { param: error.param }),
      },
    };
  const { startupFailureMessage } = await import('../startup/startup-errors.js');
  return { error: { code: 'COMMAND_FAILED', message: startupFailureMessage(error) } };
}

export async function cliMain(): Promise<void> {
  const stdout = { write: (text: string) => void process.stdout.write(text) };
  const stderr = { write: (text: string) => void process.stderr.write(text) };
  try {
    const code = await runCli(process.argv.slice(2), process.env, stdout, stderr);
    if (code >= 0) process.exitCode = code;
  } catch (error) {
    // The same one line `npm start` prints (no class name, no stack) for `tollgate serve`.
    const { startupFailureMessage } = await import('../startup/startup-errors.js');
    stderr.write(`${startupFailureMessage(error)}\n`);
    process.exitCode = 1;
  }
}
