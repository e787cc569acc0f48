import { describe, expect, it } from 'vitest';
import { chatApiOf } from '../../src/config/schema.js';
import { defaultConfig } from '../../src/config/default-config.js';
import { parseConfig } from '../../src/config/load.js';
import { ProviderRegistry } from '../../src/providers/registry.js';
import { MessagesChat } from '../../src/providers/anthropic/messages-chat.js';
import { OpenAiChat } from '../../src/providers/openai-compatible/chat.js';
import { ResponsesChat } from '../../src/providers/openai-responses/responses-chat.js';

const withUpstreams = (upstreams: Record<string, unknown>) => ({
  ...structuredClone(defaultConfig),
  upstreams: { ...defaultConfig.upstreams, ...upstreams },
});

/**
 * The risk: a channel is spoken to in the wrong protocol (an Anthropic key sent as Bearer to
 * `/chat/completions`), or a configuration that cannot work starts anyway. An upstream's
 * `chat_api` picks the adapter; kind `anthropic` speaks Messages and nothing else.
 */
describe("the protocol of an upstream's chat models", () => {
  it('defaults: chat completions, except kind anthropic (messages); each picks its adapter', async () => {
    const config = parseConfig(
      withUpstreams({
        claude: { kind: 'anthropic', base_url: 'https://api.anthropic.com/v1' },
        codex: { kind: 'openai', base_url: 'https://api.openai.com/v1', chat_api: 'responses' },
        plain: { kind: 'openai', base_url: 'https://api.openai.com/v1' },
      }),
      'test',
    );
    expect(chatApiOf(config.upstreams['claude']!)).toBe('messages');
    expect(chatApiOf(config.upstreams['codex']!)).toBe('responses');
    expect(chatApiOf(config.upstreams['plain']!)).toBe('chat_completions');
    const registry = new ProviderRegistry(config, {}, 'http://127.0.0.1:9');
    const caller = { accountId: 'acct_test' };
    try {
      expect(registry.chat('claude', caller)).toBeInstanceOf(MessagesChat);
      expect(registry.chat('codex', caller)).toBeInstanceOf(ResponsesChat);
      expect(registry.chat('plain', caller)).toBeInstanceOf(OpenAiChat);
    } finally {
      await registry.close();
    }
  });

  it('refuses an anthropic upstream told to speak another protocol, naming the field', () => {
    expect(() =>
      parseConfig(
        withUpstreams({
          claude: {
            kind: 'anthropic',
            base_url: 'https://api.anthropic.com/v1',
            chat_api: 'chat_completions',
          },
        }),
        'test',
      ),
    ).toThrow(/chat_api/);
  });
});
