import { notFound } from '../errors/api-error.js';
import { usageError } from './arguments.js';
import type { Command, CommandGroup, CommandInput } from './command.js';

/**
 * `tollgate channels list|disable|enable` (docs/routing.md): the admin API's channel routes on
 * the database. Disabling is shared through the database, so a running gateway skips the
 * channel within its refresh; breaker states and in-flight counts live in each gateway process,
 * so this process shows its own (closed, 0): read live ones from the admin API or `/metrics`.
 */
export const CHANNEL_COMMANDS: CommandGroup = {
  list: {
    usage: 'channels list',
    note: 'every configured channel, disabled or not (live breaker states: admin API)',
    args: [],
    options: [],
    run: async ({ context }) => ({
      body: { object: 'list', data: await (await context.services()).channels.list() },
      exitCode: 0,
    }),
  },
  disable: switchCommand('disable', '[--reason TEXT]'),
  enable: switchCommand('enable', ''),
};

function switchCommand(action: 'disable' | 'enable', options: string): Command {
  return {
    usage: `channels ${action} CHANNEL_ID ${options}`.trimEnd(),
    args: ['CHANNEL_ID'],
    options: action === 'disable' ? ['reason'] : [],
    run: async (input: CommandInput) => {
      const channelId = input.args[0];
      if (channelId === undefined || channelId === '')
        throw usageError('CHANNEL_ID is missing (run tollgate --help)', 'CHANNEL_ID');
      const reason = input.values.reason;
      const services = await input.context.services();
      const status = await services.channels.setDisabled(
        channelId,
        action === 'disable',
        typeof reason === 'string' ? reason : null,
      );
      if (status === undefined) throw notFound('channel');
      return { body: status, exitCode: 0 };
    },
  };
}
