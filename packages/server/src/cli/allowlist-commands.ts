import type { Command, CommandInput, Outcome } from './command.js';
import { usageError } from './arguments.js';

/** `--allowed-ips a,b` as the list the admin API takes; absent stays absent. */
export function allowedIpsOption(value: string | boolean | undefined): string[] | undefined {
  return typeof value === 'string' ? value.split(',').filter(Boolean) : undefined;
}

/**
 * `tollgate keys update KEY_ID (--allowed-ips CIDR,… | --allow-any)`: the CLI side of `PATCH
 * /admin/v1/keys/{id}`, through the same KeyService.
 */
export const keysUpdateCommand: Command = {
  usage: 'keys update KEY_ID (--allowed-ips CIDR,… | --allow-any)',
  note: "--allowed-ips replaces the key's allowlist; --allow-any lifts it",
  args: ['KEY_ID'],
  options: ['allowed-ips', 'allow-any'],
  run: async (input: CommandInput): Promise<Outcome> => {
    const keyId = input.args[0];
    if (keyId === undefined || keyId === '')
      throw usageError('KEY_ID is missing (run tollgate --help)', 'KEY_ID');
    const anyAddress = input.values['allow-any'] === true;
    const list = allowedIpsOption(input.values['allowed-ips']);
    if (anyAddress === (list !== undefined))
      throw usageError('give either --allowed-ips or --allow-any', 'allowed-ips');
    const keys = (await input.context.services()).keys;
    return {
      body: await keys.update(keyId, { allowed_ips: anyAddress ? null : list }),
      exitCode: 0,
    };
  },
};
