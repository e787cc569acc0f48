import type { Command, CommandInput, Outcome } from './command.js';
import { usageError } from './arguments.js';

/**
 * `tollgate keys budget` and `tollgate accounts budget`: the CLI side of `PUT`/`DELETE
 * /admin/v1/{keys,accounts}/{id}/budget`, through the same BudgetService (same rules, same
 * answers).
 */
function budgetCommand(scope: 'keys' | 'accounts'): Command {
  const idName = scope === 'keys' ? 'KEY_ID' : 'ACCOUNT_ID';
  return {
    usage: `${scope} budget ${idName} (--limit MICRO_YUAN --window daily|weekly|monthly|total | --remove)`,
    note: 'windows turn over at local midnight in budget_time_zone; --remove lifts the budget',
    args: [idName],
    options: ['limit', 'window', 'remove'],
    run: async (input: CommandInput): Promise<Outcome> => {
      const id = input.args[0];
      if (id === undefined || id === '')
        throw usageError(`${idName} is missing (run tollgate --help)`, idName);
      const { values } = input;
      const budgets = (await input.context.services()).budgets;
      if (values.remove === true) {
        if (values.limit !== undefined || values.window !== undefined)
          throw usageError('--remove takes neither --limit nor --window', 'remove');
        const body =
          scope === 'keys' ? await budgets.removeForKey(id) : await budgets.removeForAccount(id);
        return { body, exitCode: 0 };
      }
      const budget = {
        limit: typeof values.limit === 'string' ? Number(values.limit) : undefined,
        window: values.window,
      };
      const body =
        scope === 'keys'
          ? await budgets.setForKey(id, budget)
          : await budgets.setForAccount(id, budget);
      return { body, exitCode: 0 };
    },
  };
}

export const keysBudgetCommand = budgetCommand('keys');
export const accountsBudgetCommand = budgetCommand('accounts');

/**
 * `tollgate budgets time-zone [ZONE]`: without ZONE, the deployment's zone and this
 * configuration's; with ZONE, makes it the deployment's and carries every budget's current spend
 * into the new zone's window (budgets/budget-time-zone.ts). Opens the database alone, without
 * the start-up check: it is how a deployment leaves the zone that check holds it to. Run it with
 * every instance stopped, then start them with `budget_time_zone: ZONE`.
 */
export const budgetTimeZoneCommand: Command = {
  usage: 'budgets time-zone [ZONE]',
  note: "the deployment's budget_time_zone; with ZONE: change it, every instance stopped (docs/billing.md)",
  args: ['ZONE'],
  options: [],
  run: async (input: CommandInput): Promise<Outcome> => {
    const [{ changeBudgetTimeZone, storedBudgetTimeZone }, { systemClock }, settings, store] =
      await Promise.all([
        import('../budgets/budget-time-zone.js'),
        import('../util/effects.js'),
        input.context.settings(),
        input.context.store(),
      ]);
    const configured = settings.config.budget_time_zone;
    const zone = input.args[0];
    if (zone === undefined || zone === '') {
      const stored = (await storedBudgetTimeZone(store.db)) ?? null;
      return { body: { budget_time_zone: stored, configured }, exitCode: 0 };
    }
    const change = await changeBudgetTimeZone(store.db, { zone, current: configured }, systemClock);
    return { body: { ...change, configured }, exitCode: 0 };
  },
};
