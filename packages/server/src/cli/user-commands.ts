import { usageError } from './arguments.js';
import type { CommandGroup, CommandInput } from './commands.js';

function email(input: CommandInput): string {
  const value = input.args[0];
  if (value === undefined || value === '')
    throw usageError('EMAIL is missing (run tollgate --help)', 'EMAIL');
  return value;
}

/** `tollgate users invite|reset-totp` (docs/console.md): console users from the CLI. */
export const USER_COMMANDS: CommandGroup = {
  invite: {
    usage: 'users invite EMAIL --role member|operator [--account ACCOUNT_ID]',
    note: 'a one-time console link (invite_url, docs/console.md)',
    args: ['EMAIL'],
    options: ['role', 'account'],
    run: async (input) => {
      const { consoleUsers } = await input.context.services();
      return {
        body: await consoleUsers.invite({
          email: email(input),
          role: input.values.role,
          account_id: input.values.account,
        }),
        exitCode: 0,
      };
    },
  },
  'reset-totp': {
    usage: 'users reset-totp EMAIL',
    note: "clears a user's second factor and ends their sessions (the recovery path)",
    args: ['EMAIL'],
    options: [],
    run: async (input) => {
      const { consoleTotp } = await input.context.services();
      return { body: await consoleTotp.reset(email(input)), exitCode: 0 };
    },
  },
};
