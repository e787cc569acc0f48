import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { ProviderRegistry } from '../../src/providers/registry.js';
import { testConfig } from '../helpers/gateway.js';

const caller = { accountId: 'acct_lookup' };

/** The task adapters of one upstream of `kind`, with `task_lookup` as given (absent: the default). */
function adaptersOf(kind: 'simulator' | 'openai' | 'ark', taskLookup?: boolean) {
  const config = parseConfig(
    testConfig({
      upstreams: {
        simulator: {
          kind,
          ...(kind === 'simulator' ? {} : { base_url: 'https://upstream.example' }),
          ...(taskLookup === undefined ? {} : { task_lookup: taskLookup }),
        },
      },
    }),
    'test',
  );
  const registry = new ProviderRegistry(config, {}, 'http://127.0.0.1:1');
  return {
    video: registry.tasks('simulator', 'video', caller),
    h3: registry.tasks('simulator', 'h3', caller),
    close: () => registry.close(),
  };
}

/**
 * Issue 18, Found 11: the read-only look-up of an unanswered submission is a per-upstream
 * capability (`upstreams.<name>.task_lookup`), not a property of the simulator alone: an Ark or
 * OpenAI-compatible upstream that offers it gets it (such a task is found instead of waiting
 * for an operator), and an upstream that does not is never asked.
 */
describe('the task look-up capability of an upstream', () => {
  it.each([
    ['simulator', undefined, true],
    ['openai', undefined, false],
    ['ark', undefined, false],
    ['openai', true, true],
    ['ark', true, true],
    ['simulator', false, false],
  ] as const)(
    '%s with task_lookup %s: the video and H3 adapters look up: %s',
    async (kind, flag, expected) => {
      const adapters = adaptersOf(kind, flag);
      try {
        expect(adapters.video.lookup !== undefined).toBe(expected);
        expect(adapters.h3.lookup !== undefined).toBe(expected);
      } finally {
        await adapters.close();
      }
    },
  );

  it('refuses a task_lookup that is not a boolean, naming the field', () => {
    expect(() =>
      parseConfig(
        testConfig({
          upstreams: { simulator: { kind: 'simulator', task_lookup: 'yes' as unknown as boolean } },
        }),
        'test',
      ),
    ).toThrow(/task_lookup/);
  });
});
