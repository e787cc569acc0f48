import path from 'node:path';
import { parseArgs } from 'node:util';
import { checkLedger } from '../billing/ledger-check.js';
import { modelPricesView, priceHistoryView } from '../billing/price-view.js';
import { loadSettings } from '../config/load.js';
import { startupFailureMessage } from '../startup/startup-errors.js';
import { ApiError } from '../errors/api-error.js';
import { serve } from '../main.js';
import { operatorRecordView } from '../requests/record-view.js';
import { createServices, defaultDatabaseUrl, type Services } from '../services.js';
import { shareServiceOf } from '../shares/share-service.js';
import { startSimulator } from '../simulator/server.js';
import { parseStatementPeriod } from '../usage/statement.js';
import { renderStatement } from '../usage/statement-output.js';

const USAGE = `tollgate <command> — every command prints JSON (docs/admin.md)

  serve                                         run the gateway (same as npm start)
  sim [--port N] [--host H]                     run the simulator upstream alone
  ledger check                                  verify every ledger invariant; exit 1 on a violation
  accounts create --email E
  accounts show ACCOUNT_ID
  topup ACCOUNT_ID --amount MICRO_YUAN --reference REF
  statement ACCOUNT_ID [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--format json|csv]   balance movements (default: this month)
  keys create ACCOUNT_ID [--kind personal|service] [--models a,b] [--expires-at ISO] [--name N]
  keys list ACCOUNT_ID
  keys disable KEY_ID
  keys rotate KEY_ID [--expire-old-in SECONDS]
  prices set MODEL --json '{"input_per_million_tokens": 500000}'
  prices history MODEL
  codes create --amount MICRO_YUAN [--expires-at ISO]
  codes redeem ACCOUNT_ID --code CODE
  requests show REQUEST_ID
  requests resolve REQUEST_ID (--capture MICRO_YUAN | --release) --reason TEXT
  tasks list [--status S] [--account ACCOUNT_ID] [--kind image|video|h3]
  tasks show TASK_ID
  tasks resolve TASK_ID (--release | --attach UPSTREAM_TASK_ID) --reason TEXT
  requests flagged [--all]                      usage beyond the cap, not yet reviewed (--all: also reviewed)
  requests review-usage REQUEST_ID --reason TEXT
  shares list [--state pending_review|approved|rejected|revoked]   oldest first (the review queue)
  shares show SHARE_ID                          with its journal (who decided what, and why)
  shares approve SHARE_ID [--reason TEXT]
  shares reject SHARE_ID --reason TEXT
  shares revoke SHARE_ID --reason TEXT
  users invite EMAIL --role member|operator [--account ACCOUNT_ID]   a one-time console link (invite_url, docs/console.md)
`;

interface Output {
  write(text: string): void;
}

/** Runs one CLI command; returns the exit code. Output is JSON on `out`, errors JSON on `err`. */
export async function runCli(
  argv: string[],
  env: NodeJS.ProcessEnv,
  out: Output,
  err: Output,
): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
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
      status: { type: 'string' },
      account: { type: 'string' },
      attach: { type: 'string' },
      state: { type: 'string' },
      role: { type: 'string' },
      reason: { type: 'string' },
      port: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      format: { type: 'string' },
      host: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command, sub, target] = positionals;
  if (values.help === true || command === undefined) {
    out.write(USAGE);
    return command === undefined && values.help !== true ? 2 : 0;
  }
  if (command === 'serve') {
    await serve(env);
    return -1; // keeps running
  }
  if (command === 'sim') {
    const simulator = await startSimulator({
      host: values.host ?? '127.0.0.1',
      port: Number(values.port ?? 18000),
    });
    out.write(`${JSON.stringify({ simulator: simulator.url })}\n`);
    return -1;
  }
  const settings = loadSettings(env);
  const services = await createServices({
    config: settings.config,
    databaseUrl: settings.databaseUrl ?? defaultDatabaseUrl(settings.dataDir),
    assetsDir: path.join(settings.dataDir, 'assets'),
    storageSecrets: settings.storageSecrets,
    upstreams: false,
  });
  try {
    const result = await dispatch(services, command, sub, target, values);
    if (result.text === undefined) out.write(`${JSON.stringify(result.body, null, 2)}\n`);
    else for await (const chunk of result.text) out.write(chunk);
    return result.exitCode;
  } catch (error) {
    if (error instanceof ApiError) {
      err.write(`${JSON.stringify({ error: { code: error.code, message: error.message } })}\n`);
      return 1;
    }
    throw error;
  } finally {
    await services.close();
  }
}

type Values = Record<string, string | boolean | undefined>;

async function dispatch(
  services: Services,
  command: string,
  sub: string | undefined,
  target: string | undefined,
  values: Values,
): Promise<{ body: unknown; exitCode: number; text?: AsyncIterable<string> }> {
  const ok = (body: unknown) => ({ body, exitCode: 0 });
  const amount = values['amount'] === undefined ? undefined : Number(values['amount']);
  const key = `${command} ${sub ?? ''}`.trim();
  switch (key) {
    case 'ledger check': {
      // A request in flight between two reads can look like a difference: check twice.
      let report = await checkLedger(services.store.db);
      if (!report.ok) report = await checkLedger(services.store.db);
      return { body: report, exitCode: report.ok ? 0 : 1 };
    }
    case 'accounts create':
      return ok(await services.accounts.create({ email: values['email'] }));
    case 'accounts show':
      return ok(await services.accounts.get(required(target ?? sub, 'ACCOUNT_ID')));
    case 'keys create':
      return ok(
        await services.keys.create(required(target, 'ACCOUNT_ID'), {
          kind: values['kind'],
          models:
            typeof values['models'] === 'string'
              ? values['models'].split(',').filter(Boolean)
              : undefined,
          expires_at: values['expires-at'],
          name: values['name'],
        }),
      );
    case 'keys list':
      // The same list object as GET /admin/v1/accounts/{id}/keys (docs/api-conventions.md).
      return ok({ object: 'list', data: await services.keys.list(required(target, 'ACCOUNT_ID')) });
    case 'keys disable':
      return ok(await services.keys.disable(required(target, 'KEY_ID')));
    case 'keys rotate':
      return ok(
        await services.keys.rotate(required(target, 'KEY_ID'), {
          ...(values['expire-old-in'] === undefined
            ? {}
            : { expire_old_in_seconds: Number(values['expire-old-in']) }),
        }),
      );
    case 'prices set':
      return ok(
        modelPricesView(
          await services.prices.set(
            required(target, 'MODEL'),
            JSON.parse(String(values['json'] ?? '{}')) as unknown,
          ),
        ),
      );
    case 'prices history':
      return ok(priceHistoryView(await services.prices.history(required(target, 'MODEL'))));
    case 'codes create':
      return ok(
        await services.accounts.createRedemptionCode({ amount, expires_at: values['expires-at'] }),
      );
    case 'users invite':
      return ok(
        await services.consoleUsers.invite({
          email: required(target, 'EMAIL'),
          role: values['role'],
          account_id: values['account'],
        }),
      );
    case 'codes redeem':
      return ok(
        await services.accounts.redeem(required(target, 'ACCOUNT_ID'), { code: values['code'] }),
      );
    case 'requests show': {
      const row = await services.requests.records.byId(required(target, 'REQUEST_ID'));
      if (row === undefined) throw new ApiError('NOT_FOUND', 'no such request');
      return ok(operatorRecordView(row));
    }
    case 'tasks list':
      return ok(
        await services.taskOperations.list({
          status: values['status'],
          accountId: values['account'],
          kind: values['kind'],
        }),
      );
    case 'tasks show':
      return ok(await services.taskOperations.show(required(target, 'TASK_ID')));
    case 'tasks resolve':
      return ok(
        await services.taskOperations.resolve(required(target, 'TASK_ID'), {
          action:
            values['release'] === true
              ? 'release'
              : values['attach'] !== undefined
                ? 'attach'
                : undefined,
          upstream_task_id: values['attach'],
          reason: values['reason'],
        }),
      );
    case 'shares list':
      return ok(await shareServiceOf(services).listForReview({ state: values['state'] }));
    case 'shares show':
      return ok(await shareServiceOf(services).show(required(target, 'SHARE_ID')));
    case 'shares approve':
    case 'shares reject':
    case 'shares revoke': {
      const shares = shareServiceOf(services);
      const id = required(target, 'SHARE_ID');
      const input = { reason: values['reason'] };
      if (sub === 'approve') return ok(await shares.approve(id, input));
      return ok(sub === 'reject' ? await shares.reject(id, input) : await shares.revoke(id, input));
    }
    case 'requests flagged':
      return ok({
        object: 'list',
        data: await services.usageReviews.listFlagged({ includeReviewed: values['all'] === true }),
      });
    case 'requests review-usage':
      return ok(
        await services.usageReviews.review(required(target, 'REQUEST_ID'), {
          reason: values['reason'],
        }),
      );
    case 'requests resolve':
      return ok(
        await services.settlements.resolve(required(target, 'REQUEST_ID'), {
          action:
            values['release'] === true
              ? 'release'
              : values['capture'] !== undefined
                ? 'capture'
                : undefined,
          amount: values['capture'] === undefined ? undefined : Number(values['capture']),
          reason: values['reason'],
        }),
      );
    default:
      if (command === 'topup') {
        return ok(
          await services.accounts.topUp(required(sub, 'ACCOUNT_ID'), {
            amount,
            reference: values['reference'],
          }),
        );
      }
      if (command === 'statement') {
        // Written as it is read, exactly what the admin API answers (docs/usage.md).
        const format = values['format'] ?? 'json';
        if (format !== 'json' && format !== 'csv')
          throw new ApiError('INVALID_INPUT', '--format must be json or csv', 'format');
        const statement = await services.statements.prepare(
          required(sub, 'ACCOUNT_ID'),
          parseStatementPeriod(
            { from: optionalText(values['from']), to: optionalText(values['to']) },
            services.clock.now(),
          ),
        );
        return { body: null, exitCode: 0, text: renderStatement(statement, format) };
      }
      throw new ApiError('INVALID_INPUT', `unknown command "${key}"; run tollgate --help`);
  }
}

function optionalText(value: string | boolean | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function required(value: string | undefined, name: string): string {
  if (value === undefined || value === '')
    throw new ApiError('INVALID_INPUT', `${name} is required`, name);
  return value;
}

export async function cliMain(): Promise<void> {
  const stdout = { write: (text: string) => void process.stdout.write(text) };
  const stderr = { write: (text: string) => void process.stderr.write(text) };
  try {
    const code = await runCli(process.argv.slice(2), process.env, stdout, stderr);
    if (code >= 0) process.exitCode = code;
  } catch (error) {
    // The same one line `npm start` prints (no class name, no stack) for `tollgate serve`.
    stderr.write(`${startupFailureMessage(error)}\n`);
    process.exitCode = 1;
  }
}
