import { userInfo } from 'node:os';
import type { AuditActor } from '../audit/audit-log.js';
import { ApiError } from '../errors/api-error.js';
import { usageError } from './arguments.js';
import { text, type CommandGroup, type CommandInput } from './command.js';

function email(input: CommandInput): string {
  const value = input.args[0];
  if (value === undefined || value === '')
    throw usageError('EMAIL is missing (run tollgate --help)', 'EMAIL');
  return value;
}

/**
 * Where the printed invitation link points: `--origin` (the address people reach the gateway
 * by, e.g. behind a proxy `https://gateway.example.com`), else the address the gateway listens
 * on (`HOST`, `PORT`), a wildcard host shown as loopback.
 */
async function originOf(input: CommandInput): Promise<string> {
  const given = text(input.values.origin);
  if (given !== undefined) {
    const url = URL.canParse(given) ? new URL(given) : undefined;
    if (
      url === undefined ||
      !/^https?:$/.test(url.protocol) ||
      url.search !== '' ||
      url.hash !== ''
    )
      throw usageError(
        '--origin must be an http(s) URL without query or fragment, such as https://gateway.example.com',
        'origin',
      );
    return given;
  }
  const { host, port } = await input.context.settings();
  const shown = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}`;
}

/**
 * The audit actor of a CLI command: whoever runs it on the gateway's database, named by their
 * OS login (the row says it came from the CLI, not from the admin token or a console session).
 */
function cliActor(): AuditActor {
  let login: string | undefined;
  try {
    login = userInfo().username;
  } catch {
    // No passwd entry for the uid (some containers): the row still says it was the CLI.
  }
  return login === undefined ? { kind: 'cli' } : { kind: 'cli', id: login };
}

/** `users disable|enable EMAIL`: the one `OperatorActions` call the admin API makes too. */
async function setDisabled(input: CommandInput, disabled: boolean) {
  const services = await input.context.services();
  const user = await services.consoleUsers.byEmail(email(input));
  if (user === undefined)
    throw new ApiError('NOT_FOUND', `no console user ${email(input)}`, 'EMAIL');
  const { OperatorActions } = await import('../operator/operator-actions.js');
  const body = await new OperatorActions(services).setUserDisabled(cliActor(), user.id, disabled, {
    allowLastOperator: input.values.force === true,
  });
  return { body, exitCode: 0 };
}

/** `tollgate users invite|disable|enable|reset-totp` (docs/console.md): console users from the CLI. */
export const USER_COMMANDS: CommandGroup = {
  invite: {
    usage: 'users invite EMAIL --role member|operator [--account ACCOUNT_ID] [--origin URL]',
    note: 'a one-time console link (invite_url, the full link: docs/console.md)',
    args: ['EMAIL'],
    options: ['role', 'account', 'origin'],
    run: async (input) => {
      const origin = await originOf(input);
      const { consoleUsers } = await input.context.services();
      const { withOrigin } = await import('../users/console-users.js');
      const invitation = await consoleUsers.invite({
        email: email(input),
        role: input.values.role,
        account_id: input.values.account,
      });
      return { body: withOrigin(invitation, origin), exitCode: 0 };
    },
  },
  disable: {
    usage: 'users disable EMAIL [--force]',
    note: "ends the user's sessions everywhere, voids their invitations, refuses sign-in (audited); --force: even the last operator",
    args: ['EMAIL'],
    options: ['force'],
    run: (input) => setDisabled(input, true),
  },
  enable: {
    usage: 'users enable EMAIL',
    note: 'lets a disabled user sign in again (audited)',
    args: ['EMAIL'],
    options: [],
    run: (input) => setDisabled(input, false),
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
