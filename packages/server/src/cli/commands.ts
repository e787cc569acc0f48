import { ApiError } from '../errors/api-error.js';
import type { OptionName, OptionValues } from './arguments.js';
import { usageError } from './arguments.js';
import { CHANNEL_COMMANDS } from './channel-commands.js';
import { USER_COMMANDS } from './user-commands.js';
import { allowedIpsOption, keysUpdateCommand } from './allowlist-commands.js';
import { accountsBudgetCommand, keysBudgetCommand } from './budget-commands.js';
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

const ok = (body: unknown): Outcome => ({ body, exitCode: 0 });

/** The positional `name` at `index`; missing or empty is a usage error naming it. */
function arg(input: CommandInput, index: number, name: string): string {
  const value = input.args[index];
  if (value === undefined || value === '')
    throw usageError(`${name} is missing (run tollgate --help)`, name);
  return value;
}

function text(value: string | boolean | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function integerOption(value: string | boolean | undefined): number | undefined {
  return typeof value === 'string' ? Number(value) : undefined;
}

/** `--json`'s value: a JSON document, else a usage error naming the option. */
function jsonOption(value: string | boolean | undefined): unknown {
  if (typeof value !== 'string') throw usageError('--json is required', 'json');
  try {
    return JSON.parse(value) as unknown;
  } catch (error) {
    throw usageError(`--json is not valid JSON: ${(error as Error).message}`, 'json');
  }
}

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
};

/** Commands in groups (`tollgate keys list ...`): group, then subcommand. */
export const COMMAND_GROUPS: Readonly<Record<string, CommandGroup>> = {
  ledger: {
    check: {
      usage: 'ledger check',
      note: 'verify every ledger invariant; exit 1 on a violation',
      args: [],
      options: [],
      run: async ({ context }) => {
        const [{ checkLedger }, store] = await Promise.all([
          import('../billing/ledger-check.js'),
          context.store(),
        ]);
        // One snapshot (billing/ledger-check.ts): a violation is real, never a request in flight.
        const report = await checkLedger(store.db);
        return { body: report, exitCode: report.ok ? 0 : 1 };
      },
    },
  },
  accounts: {
    create: {
      usage: 'accounts create --email E',
      args: [],
      options: ['email'],
      run: async ({ context, values }) =>
        ok(await (await context.accounts()).create({ email: values.email })),
    },
    show: {
      usage: 'accounts show ACCOUNT_ID',
      args: ['ACCOUNT_ID'],
      options: [],
      run: async (input) => {
        const accountId = arg(input, 0, 'ACCOUNT_ID');
        return ok(await (await input.context.accounts()).get(accountId));
      },
    },
    list: {
      usage: 'accounts list [--q TEXT] [--id-prefix P] [--limit N] [--after ACCOUNT_ID]',
      note: 'newest first; --q: part of the email, any case',
      args: [],
      options: ['q', 'id-prefix', 'limit', 'after'],
      run: async ({ context, values }) => {
        const [{ AccountListing }, store] = await Promise.all([
          import('../accounts/account-listing.js'),
          context.store(),
        ]);
        return ok(
          await new AccountListing(store.db, await context.effects()).list({
            q: values.q,
            id_prefix: values['id-prefix'],
            limit: values.limit,
            after: values.after,
          }),
        );
      },
    },
    budget: accountsBudgetCommand,
  },
  keys: {
    create: {
      usage:
        'keys create ACCOUNT_ID [--kind personal|service] [--models a,b] [--expires-at ISO] [--name N] [--allowed-ips CIDR,…]',
      args: ['ACCOUNT_ID'],
      options: ['kind', 'models', 'expires-at', 'name', 'allowed-ips'],
      run: async (input) => {
        const { values } = input;
        const accountId = arg(input, 0, 'ACCOUNT_ID');
        const services = await input.context.services();
        return ok(
          await services.keys.create(accountId, {
            kind: values.kind,
            models:
              typeof values.models === 'string'
                ? values.models.split(',').filter(Boolean)
                : undefined,
            expires_at: values['expires-at'],
            name: values.name,
            allowed_ips: allowedIpsOption(values['allowed-ips']),
          }),
        );
      },
    },
    list: {
      usage: 'keys list ACCOUNT_ID',
      args: ['ACCOUNT_ID'],
      options: [],
      run: async (input) => {
        const accountId = arg(input, 0, 'ACCOUNT_ID');
        const services = await input.context.services();
        // The same list object as GET /admin/v1/accounts/{id}/keys (docs/api-conventions.md).
        return ok({ object: 'list', data: await services.keys.list(accountId) });
      },
    },
    disable: {
      usage: 'keys disable KEY_ID',
      args: ['KEY_ID'],
      options: [],
      run: async (input) => {
        const keyId = arg(input, 0, 'KEY_ID');
        return ok(await (await input.context.services()).keys.disable(keyId));
      },
    },
    rotate: {
      usage: 'keys rotate KEY_ID [--expire-old-in SECONDS]',
      args: ['KEY_ID'],
      options: ['expire-old-in'],
      run: async (input) => {
        const keyId = arg(input, 0, 'KEY_ID');
        const expireOldIn = integerOption(input.values['expire-old-in']);
        return ok(
          await (
            await input.context.services()
          ).keys.rotate(keyId, {
            ...(expireOldIn === undefined ? {} : { expire_old_in_seconds: expireOldIn }),
          }),
        );
      },
    },
    budget: keysBudgetCommand,
    update: keysUpdateCommand,
  },
  prices: {
    set: {
      usage: `prices set MODEL --json '{"input_per_million_tokens": 500000}'`,
      args: ['MODEL'],
      options: ['json'],
      run: async (input) => {
        const model = arg(input, 0, 'MODEL');
        const prices = jsonOption(input.values.json);
        const [{ modelPricesView }, services] = await Promise.all([
          import('../billing/price-view.js'),
          input.context.services(),
        ]);
        return ok(modelPricesView(await services.prices.set(model, prices)));
      },
    },
    sync: {
      usage: 'prices sync [--force]',
      note: "add the configuration's prices as a new version where they changed; never backwards without --force",
      args: [],
      options: ['force'],
      run: async ({ context, values }) => {
        const results = await (
          await context.services()
        ).prices.syncFromConfig({ force: values.force === true });
        // A refused model is an error for a script: the others are applied all the same.
        const refused = results.some((result) => result.outcome === 'refused');
        return { body: { object: 'list', data: results }, exitCode: refused ? 1 : 0 };
      },
    },
    history: {
      usage: 'prices history MODEL',
      args: ['MODEL'],
      options: [],
      run: async (input) => {
        const model = arg(input, 0, 'MODEL');
        const [{ priceHistoryView }, services] = await Promise.all([
          import('../billing/price-view.js'),
          input.context.services(),
        ]);
        return ok(priceHistoryView(await services.prices.history(model)));
      },
    },
  },
  codes: {
    create: {
      usage: 'codes create --amount MICRO_YUAN [--expires-at ISO]',
      args: [],
      options: ['amount', 'expires-at'],
      run: async ({ context, values }) =>
        ok(
          await (
            await context.accounts()
          ).createRedemptionCode({
            amount: integerOption(values.amount),
            expires_at: values['expires-at'],
          }),
        ),
    },
    redeem: {
      usage: 'codes redeem ACCOUNT_ID --code CODE',
      args: ['ACCOUNT_ID'],
      options: ['code'],
      run: async (input) => {
        const accountId = arg(input, 0, 'ACCOUNT_ID');
        const accounts = await input.context.accounts();
        return ok(await accounts.redeem(accountId, { code: input.values.code }));
      },
    },
  },
  requests: {
    show: {
      usage: 'requests show REQUEST_ID',
      args: ['REQUEST_ID'],
      options: [],
      run: async (input) => {
        const requestId = arg(input, 0, 'REQUEST_ID');
        const [{ operatorRecordView }, services] = await Promise.all([
          import('../requests/record-view.js'),
          input.context.services(),
        ]);
        const row = await services.requests.records.byId(requestId);
        if (row === undefined) throw new ApiError('NOT_FOUND', 'no such request');
        return ok(operatorRecordView(row));
      },
    },
    resolve: {
      usage: 'requests resolve REQUEST_ID (--capture MICRO_YUAN | --release) --reason TEXT',
      args: ['REQUEST_ID'],
      options: ['capture', 'release', 'reason'],
      run: async (input) => {
        const { values } = input;
        const requestId = arg(input, 0, 'REQUEST_ID');
        const services = await input.context.services();
        return ok(
          await services.settlements.resolve(requestId, {
            action:
              values.release === true
                ? 'release'
                : values.capture !== undefined
                  ? 'capture'
                  : undefined,
            amount: integerOption(values.capture),
            reason: values.reason,
          }),
        );
      },
    },
    flagged: {
      usage: 'requests flagged [--all]',
      note: 'usage beyond the cap, not yet reviewed (--all: also reviewed)',
      args: [],
      options: ['all'],
      run: async ({ context, values }) => {
        const services = await context.services();
        return ok({
          object: 'list',
          data: await services.usageReviews.listFlagged({ includeReviewed: values.all === true }),
        });
      },
    },
    'review-usage': {
      usage: 'requests review-usage REQUEST_ID --reason TEXT',
      args: ['REQUEST_ID'],
      options: ['reason'],
      run: async (input) => {
        const requestId = arg(input, 0, 'REQUEST_ID');
        const services = await input.context.services();
        return ok(await services.usageReviews.review(requestId, { reason: input.values.reason }));
      },
    },
  },
  tasks: {
    list: {
      usage: 'tasks list [--status S] [--account ACCOUNT_ID] [--kind image|video|h3]',
      args: [],
      options: ['status', 'account', 'kind'],
      run: async ({ context, values }) =>
        ok(
          await (
            await context.services()
          ).taskOperations.list({
            status: values.status,
            accountId: values.account,
            kind: values.kind,
          }),
        ),
    },
    show: {
      usage: 'tasks show TASK_ID',
      args: ['TASK_ID'],
      options: [],
      run: async (input) => {
        const taskId = arg(input, 0, 'TASK_ID');
        return ok(await (await input.context.services()).taskOperations.show(taskId));
      },
    },
    resolve: {
      usage: 'tasks resolve TASK_ID (--release | --attach UPSTREAM_TASK_ID) --reason TEXT',
      args: ['TASK_ID'],
      options: ['release', 'attach', 'reason'],
      run: async (input) => {
        const { values } = input;
        const taskId = arg(input, 0, 'TASK_ID');
        const services = await input.context.services();
        return ok(
          await services.taskOperations.resolve(taskId, {
            action:
              values.release === true
                ? 'release'
                : values.attach !== undefined
                  ? 'attach'
                  : undefined,
            upstream_task_id: values.attach,
            reason: values.reason,
          }),
        );
      },
    },
  },
  shares: {
    list: {
      usage: 'shares list [--state pending_review|approved|rejected|revoked]',
      note: 'oldest first (the review queue)',
      args: [],
      options: ['state'],
      run: async ({ context, values }) => {
        const [{ shareServiceOf }, services] = await Promise.all([
          import('../shares/share-service.js'),
          context.services(),
        ]);
        return ok(await shareServiceOf(services).listForReview({ state: values.state }));
      },
    },
    show: {
      usage: 'shares show SHARE_ID',
      note: 'with its journal (who decided what, and why)',
      args: ['SHARE_ID'],
      options: [],
      run: async (input) => {
        const shareId = arg(input, 0, 'SHARE_ID');
        const [{ shareServiceOf }, services] = await Promise.all([
          import('../shares/share-service.js'),
          input.context.services(),
        ]);
        return ok(await shareServiceOf(services).show(shareId));
      },
    },
    approve: shareDecision('approve', '[--reason TEXT]'),
    reject: shareDecision('reject', '--reason TEXT'),
    revoke: shareDecision('revoke', '--reason TEXT'),
  },
  channels: CHANNEL_COMMANDS,
  users: USER_COMMANDS,
};

function shareDecision(decision: 'approve' | 'reject' | 'revoke', reasonUsage: string): Command {
  return {
    usage: `shares ${decision} SHARE_ID ${reasonUsage}`,
    args: ['SHARE_ID'],
    options: ['reason'],
    run: async (input) => {
      const shareId = arg(input, 0, 'SHARE_ID');
      const [{ shareServiceOf }, services] = await Promise.all([
        import('../shares/share-service.js'),
        input.context.services(),
      ]);
      const shares = shareServiceOf(services);
      const reason = { reason: input.values.reason };
      if (decision === 'approve') return ok(await shares.approve(shareId, reason));
      if (decision === 'reject') return ok(await shares.reject(shareId, reason));
      return ok(await shares.revoke(shareId, reason));
    },
  };
}

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
