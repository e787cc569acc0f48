import { usageError } from './arguments.js';
import { budgetTimeZoneCommand } from './budget-commands.js';
import { CHANNEL_COMMANDS } from './channel-commands.js';
import { arg, integerOption, ok, text, type Command, type CommandGroup } from './command.js';
import { MONEY_COMMAND_GROUPS } from './money-commands.js';
import { RECORD_COMMAND_GROUPS } from './record-commands.js';
import { USER_COMMANDS } from './user-commands.js';

export type { Command, CommandGroup, CommandInput, Outcome } from './command.js';

/** Commands without subcommands (`tollgate topup ...`). */
export const SINGLE_COMMANDS: Readonly<Record<string, Command>> = {
  serve: {
    usage: 'serve',
    note: 'run the gateway (same as npm start)',
    args: [],
    options: [],
    run: async ({ env }) => {
      const { serve } = await import('../main.js');
      await serve(env);
      return { body: null, exitCode: 0, runs: true };
    },
  },
  sim: {
    usage: 'sim [--port N] [--host H]',
    note: 'run the simulator upstream alone',
    args: [],
    options: ['port', 'host'],
    run: async ({ values, write }) => {
      const { simulatorBaseUrl, startSimulator } = await import('../simulator/server.js');
      const simulator = await startSimulator({
        host: text(values.host) ?? '127.0.0.1',
        port: Number(text(values.port) ?? 18000),
      });
      // The base URL a client is given: the simulator's /v1, as the gateway's is.
      write(`${JSON.stringify({ simulator: simulatorBaseUrl(simulator) })}\n`);
      return { body: null, exitCode: 0, runs: true };
    },
  },
  migrate: {
    usage: 'migrate',
    note: 'apply pending database migrations under the database lock, then exit (docs/deploy.md)',
    args: [],
    options: [],
    run: async ({ context }) => {
      // Opening the store applies what is pending whatever TOLLGATE_MIGRATE_ON_START says
      // (store/database.ts: Kysely's Migrator holds the database's migration lock, so another
      // `migrate` meanwhile waits) and refuses a schema newer than this build.
      const [{ migrationProvider }] = await Promise.all([
        import('../store/migrations/index.js'),
        context.store(true),
      ]);
      const names = Object.keys(await migrationProvider.getMigrations()).sort();
      return ok({ schema: names.at(-1) ?? null, migrations: names.length });
    },
  },
  backup: {
    usage: 'backup --to FILE',
    note: 'copy the SQLite database while it serves (PostgreSQL: pg_dump)',
    args: [],
    options: ['to'],
    run: async ({ values, env }) => {
      const { backupDatabase } = await import('./backup-command.js');
      return ok(await backupDatabase(values.to, env));
    },
  },
  topup: {
    usage: 'topup ACCOUNT_ID --amount MICRO_YUAN --reference REF',
    args: ['ACCOUNT_ID'],
    options: ['amount', 'reference'],
    run: async (input) => {
      const accountId = arg(input, 0, 'ACCOUNT_ID');
      const accounts = await input.context.accounts();
      return ok(
        await accounts.topUp(accountId, {
          amount: integerOption(input.values.amount),
          reference: input.values.reference,
        }),
      );
    },
  },
  statement: {
    usage: 'statement ACCOUNT_ID [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--format json|csv]',
    note: 'balance movements (default: this month), as the admin API answers them',
    args: ['ACCOUNT_ID'],
    options: ['from', 'to', 'format'],
    run: async (input) => {
      // Written as it is read, exactly what the admin API answers (docs/usage.md).
      const format = text(input.values.format) ?? 'json';
      if (format !== 'json' && format !== 'csv')
        throw usageError('--format must be json or csv', 'format');
      const accountId = arg(input, 0, 'ACCOUNT_ID');
      const [{ Statements, parseStatementPeriod }, { renderStatement }, store, effects] =
        await Promise.all([
          import('../usage/statement.js'),
          import('../usage/statement-output.js'),
          input.context.store(),
          input.context.effects(),
        ]);
      const statements = new Statements(store.db, effects.clock);
      const statement = await statements.prepare(
        accountId,
        parseStatementPeriod(
          { from: text(input.values.from), to: text(input.values.to) },
          effects.clock.now(),
        ),
      );
      return { body: null, exitCode: 0, text: renderStatement(statement, format) };
    },
  },
  unresolved: {
    usage: 'unresolved',
    note: 'the operator queue: submission_unknown records and tasks holding money, with totals',
    args: [],
    options: [],
    run: async ({ context }) => {
      // The admin API's handler itself (GET /admin/v1/unresolved): one shape, one rule.
      const [{ unresolvedQueue }, services] = await Promise.all([
        import('../usage/unresolved-queue.js'),
        context.services(),
      ]);
      return ok(await unresolvedQueue(services));
    },
  },
};

/** Commands in groups (`tollgate keys list ...`): group, then subcommand. */
export const COMMAND_GROUPS: Readonly<Record<string, CommandGroup>> = {
  ...MONEY_COMMAND_GROUPS,
  ...RECORD_COMMAND_GROUPS,
  channels: CHANNEL_COMMANDS,
  users: USER_COMMANDS,
  budgets: { 'time-zone': budgetTimeZoneCommand },
};

/** The usage lines of `commands`, aligned, with their notes. */
export function usageLines(commands: readonly Command[]): string {
  return commands
    .map((command) =>
      command.note === undefined
        ? `  tollgate ${command.usage}`
        : `  tollgate ${command.usage}\n      ${command.note}`,
    )
    .join('\n');
}
