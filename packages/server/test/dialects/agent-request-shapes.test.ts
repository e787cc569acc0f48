import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Risk: the agents' own requests are refused, so the tools people put behind a gateway cannot use
 * it at all. The shapes here are those Codex CLI 0.171 and Claude Code 2.1 were seen sending
 * (docs/agents.md): developer turns with client-made item ids, `client_metadata`,
 * `reasoning.summary`, `store: false`; system turns inside `messages`, adaptive thinking with
 * `display: "omitted"`, `output_config`, `context_management`, a deferred tool, a tool schema
 * with a large upper bound, a JSON-string `metadata.user_id`. What cannot be honoured is refused
 * by name and says how to configure the agent.
 */
describeEachDialect('the requests coding agents send, on $name', (dialect) => {
  let gateway: TestGateway;
  let key: string;
  beforeAll(async () => {
    gateway = await startGateway(dialect);
    ({ key } = await gateway.account(1_000_000_000, { idempotency: 'optional' }));
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  const shellTool = {
    type: 'function',
    name: 'exec_command',
    description: 'Runs a command',
    strict: false,
    parameters: {
      type: 'object',
      properties: { cmd: { type: 'string', maxLength: 524_288 } },
      required: ['cmd'],
    },
  };

  it("Codex CLI's turn: developer items with ids, client_metadata, store false, encrypted reasoning asked for", async () => {
    const answer = await gateway.call('POST', '/v1/responses', {
      key,
      idempotencyKey: null,
      body: {
        model: 'sim-chat',
        stream: true,
        input: [
          {
            type: 'message',
            id: 'msg_client_1',
            role: 'developer',
            content: [{ type: 'input_text', text: 'You are a coding agent.' }],
          },
          {
            type: 'message',
            id: 'msg_client_2',
            role: 'user',
            content: [{ type: 'input_text', text: 'say hi' }],
          },
        ],
        tools: [shellTool],
        tool_choice: 'auto',
        parallel_tool_calls: true,
        reasoning: { summary: 'auto' },
        store: false,
        include: ['reasoning.encrypted_content'],
        prompt_cache_key: '01a246dc-ab43-7ea3-bda0-9f4458c3fa19',
        client_metadata: { session_id: '01a246dc', turn_id: '01a246dd' },
      },
    });
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.body).toContain('event: response.completed');
    expect(answer.body).toContain('Simulated reply to: say hi');
    expect(String(answer.headers['x-tollgate-dropped-fields'])).toContain('client_metadata');
  });

  it("Codex's hosted web search and tool namespaces are refused by name, with the setting that turns them off", async () => {
    for (const tool of [
      { type: 'web_search', external_web_access: false },
      { type: 'namespace', name: 'multi_agent_v1', tools: [] },
    ]) {
      const answer = await gateway.call('POST', '/v1/responses', {
        key,
        idempotencyKey: null,
        body: { model: 'sim-chat', input: 'x', tools: [shellTool, tool] },
      });
      expect(answer.statusCode).toBe(400);
      const { error } = answer.json<{ error: { param: string; message: string } }>();
      expect(error.param).toBe('tools.1.type');
      expect(error.message).toContain('web_search = "disabled"');
      expect(error.message).toContain('[agents] enabled = false');
    }
  });

  it("Claude Code's turn: system turns in messages, adaptive thinking shown as omitted, context management, a deferred tool", async () => {
    const answer = await gateway.call('POST', '/v1/messages?beta=true', {
      key,
      idempotencyKey: null,
      headers: {
        'anthropic-version': '2023-06-01',
        'anthropic-beta': 'claude-code-20250219,interleaved-thinking-2025-05-14',
      },
      body: {
        model: 'sim-chat',
        max_tokens: 4_096,
        stream: false,
        system: [
          { type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.332.0b8;' },
          { type: 'text', text: 'You are an agent.', cache_control: { type: 'ephemeral' } },
        ],
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'say hi' }] },
          {
            role: 'system',
            content: [
              {
                type: 'text',
                text: '# Environment',
                cache_control: { type: 'ephemeral' },
              },
            ],
          },
        ],
        tools: [
          {
            name: 'Bash',
            description: 'Runs a command',
            input_schema: {
              $schema: 'https://json-schema.org/draft/2020-12/schema',
              type: 'object',
              properties: { command: { type: 'string', maxLength: 524_288 } },
            },
          },
          {
            name: 'DeferredToolPlaceholder',
            description: 'A tool loaded on demand',
            input_schema: { type: 'object', properties: {} },
            defer_loading: true,
          },
        ],
        metadata: { user_id: '{"device_id":"abc","session_id":"def"}' },
        thinking: { type: 'adaptive', display: 'omitted' },
        context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
        output_config: { effort: 'high' },
      },
    });
    expect(answer.statusCode, answer.body).toBe(200);
    const message = answer.json<{
      content: { type: string; text?: string; thinking?: string }[];
    }>();
    // `display: "omitted"`: the thinking the upstream did is billed, not shown (its text is
    // carried in the signature only, to be given back).
    for (const block of message.content)
      if (block.type === 'thinking') expect(block.thinking).toBe('');
    expect(message.content.find((block) => block.type === 'text')?.text).toContain(
      'Simulated reply to',
    );
    const dropped = String(answer.headers['x-tollgate-dropped-fields']);
    expect(dropped).toContain('tools.1.defer_loading');
    expect(dropped).toContain('context_management');
    expect(dropped).toContain('anthropic-beta: claude-code-20250219');
  });

  it('with thinking shown, the same turn carries its thinking block', async () => {
    const answer = await gateway.call('POST', '/v1/messages', {
      key,
      idempotencyKey: null,
      headers: { 'anthropic-version': '2023-06-01' },
      body: {
        model: 'sim-chat',
        max_tokens: 4_096,
        messages: [{ role: 'user', content: 'think first' }],
        thinking: { type: 'adaptive' },
      },
    });
    expect(answer.statusCode, answer.body).toBe(200);
    const message = answer.json<{ content: { type: string }[] }>();
    expect(message.content[0]?.type).toBe('thinking');
  });
});
