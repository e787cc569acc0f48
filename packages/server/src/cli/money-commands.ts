import { arg, integerOption, jsonOption, ok, type CommandGroup } from './command.js';
import { allowedIpsOption, keysUpdateCommand } from './allowlist-commands.js';
import { accountsBudgetCommand, keysBudgetCommand } from './budget-commands.js';

/** `tollgate ledger|accounts|keys|prices|codes …`: the accounts, their keys and the money rules. */
export const MONEY_COMMAND_GROUPS: Readonly<Record<string, CommandGroup>> = {
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
        'keys create ACCOUNT_ID [--kind personal|service] [--models a,b] [--expires-at ISO] [--name N] [--allowed-ips CIDR,…] [--idempotency required|optional]',
      args: ['ACCOUNT_ID'],
      options: ['kind', 'models', 'expires-at', 'name', 'allowed-ips', 'idempotency'],
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
            idempotency: values.idempotency,
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
};
