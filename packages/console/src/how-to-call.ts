/**
 * How to call the gateway (docs/console.md, "How to call"): the base URL and every ready snippet
 * the keys page and the models page show, as data in this one module (pure: no React, no DOM;
 * tested in test/how-to-call.test.ts). The Codex CLI and Claude Code blocks are docs/agents.md's
 * recipes with only the base URL, the model and the key put in; the test reads the doc, so the two
 * cannot drift apart.
 */

/** What stands for the key where its plaintext is not known (it is shown once, at creation). */
export const KEY_PLACEHOLDER = 'tgk_…';

/** What stands for the model when the member may call no chat model. */
export const MODEL_PLACEHOLDER = 'your-model';

/**
 * The gateway's root as the browser reached it: the console is served by the gateway itself
 * (`/console`), so the page's origin is the gateway's public address, proxies included (the
 * configuration has no public URL of its own).
 */
export function gatewayRoot(origin: string): string {
  return origin.replace(/\/+$/, '');
}

/** The OpenAI-compatible base URL: `<root>/v1`. */
export function gatewayBaseUrl(origin: string): string {
  return `${gatewayRoot(origin)}/v1`;
}

/** The snippets, each named like its recipe of docs/agents.md where it has one. */
export const SNIPPET_IDS = [
  'curl',
  'python',
  'javascript',
  'codex-config',
  'codex-run',
  'claude-env',
  'claude-run',
] as const;
export type SnippetId = (typeof SNIPPET_IDS)[number];

/**
 * Which key a snippet works with unchanged: `any` (it sends a new `Idempotency-Key` per request,
 * so a key that requires one works, and an optional key too), `optional` (the tool cannot send
 * one: its key must be created with `idempotency: optional`, docs/keys.md).
 */
export type SnippetKeyNeed = 'any' | 'optional';

export interface Snippet {
  readonly id: SnippetId;
  /** The text's language, for the `<code>` element (`language-…`). */
  readonly language: 'sh' | 'python' | 'javascript' | 'toml';
  readonly keyNeed: SnippetKeyNeed;
  readonly text: string;
}

export interface CallTarget {
  /** The page's origin (`location.origin`). */
  readonly origin: string;
  /** The plaintext key, or `null` where it is not known (`KEY_PLACEHOLDER`). */
  readonly key: string | null;
  /** A chat model the key may call, or `null` (`MODEL_PLACEHOLDER`). */
  readonly model: string | null;
}

/** Every snippet for `target`, in the order the pages show them. */
export function callSnippets(target: CallTarget): Snippet[] {
  const base = gatewayBaseUrl(target.origin);
  const root = gatewayRoot(target.origin);
  const key = target.key ?? KEY_PLACEHOLDER;
  const model = target.model ?? MODEL_PLACEHOLDER;
  const texts: Record<SnippetId, Omit<Snippet, 'id'>> = {
    // README's "Try it" writes a new id as `node -p 'crypto.randomUUID()'` (no uuidgen needed).
    curl: {
      language: 'sh',
      keyNeed: 'any',
      text: `curl ${base}/chat/completions \\
  -H "Authorization: Bearer ${key}" \\
  -H "Content-Type: application/json" \\
  -H "Idempotency-Key: $(node -p 'crypto.randomUUID()')" \\
  -d '{"model":"${model}","messages":[{"role":"user","content":"say hi"}]}'`,
    },
    python: {
      language: 'python',
      keyNeed: 'any',
      text: `import uuid

from openai import OpenAI

client = OpenAI(base_url="${base}", api_key="${key}")
completion = client.chat.completions.create(
    model="${model}",
    messages=[{"role": "user", "content": "say hi"}],
    # A new key per request; the SDK's own retries resend it, so a retry is a replay, never a
    # second charge. With an optional-idempotency key this line may be left out.
    extra_headers={"Idempotency-Key": str(uuid.uuid4())},
)
print(completion.choices[0].message.content)`,
    },
    javascript: {
      language: 'javascript',
      keyNeed: 'any',
      text: `import OpenAI from 'openai';

const client = new OpenAI({ baseURL: '${base}', apiKey: '${key}' });
const completion = await client.chat.completions.create(
  { model: '${model}', messages: [{ role: 'user', content: 'say hi' }] },
  // A new key per request; the SDK's own retries resend it, so a retry is a replay, never a
  // second charge. With an optional-idempotency key these options may be left out.
  { headers: { 'Idempotency-Key': crypto.randomUUID() } },
);
console.log(completion.choices[0].message.content);`,
    },
    // docs/agents.md, recipe codex-config (~/.codex/config.toml).
    'codex-config': {
      language: 'toml',
      keyNeed: 'optional',
      text: `model = "${model}"
model_provider = "tollgate"
# Codex offers OpenAI's hosted web search and sub-agent tool namespaces by default; neither can
# run behind a chat-completions channel, and the gateway refuses them by name (400 tools.N.type).
web_search = "disabled"
# Codex's own traffic to OpenAI and GitHub (update check, plugin sync, analytics) never goes
# through the gateway; off, nothing leaves the machine but the calls to it.
check_for_update_on_startup = false

[agents]
enabled = false

[features]
plugins = false

[analytics]
enabled = false

[model_providers.tollgate]
name = "Tollgate"
base_url = "${base}"
env_key = "TOLLGATE_API_KEY"
wire_api = "responses"`,
    },
    // docs/agents.md, recipe codex-run.
    'codex-run': {
      language: 'sh',
      keyNeed: 'optional',
      text: `TOLLGATE_API_KEY=${key} codex exec --skip-git-repo-check "say hi" < /dev/null`,
    },
    // docs/agents.md, recipe claude-env: the gateway's root (the routes are under /v1).
    'claude-env': {
      language: 'sh',
      keyNeed: 'optional',
      text: `export ANTHROPIC_BASE_URL=${root}
export ANTHROPIC_AUTH_TOKEN=${key}
export ANTHROPIC_MODEL=${model}
# The small model of its background work (summaries, titles); Claude Code reads both names.
export ANTHROPIC_SMALL_FAST_MODEL=${model}
export ANTHROPIC_DEFAULT_HAIKU_MODEL=${model}
# Claude Code asks for 32,000 output tokens; a model whose cap is lower refuses that (400).
export CLAUDE_CODE_MAX_OUTPUT_TOKENS=4096
# Its telemetry and update checks go to Anthropic directly, not through the gateway.
export CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`,
    },
    // docs/agents.md, recipe claude-run.
    'claude-run': { language: 'sh', keyNeed: 'optional', text: `claude -p "say hi"` },
  };
  return SNIPPET_IDS.map((id) => ({ id, ...texts[id] }));
}

/** The chat models of `models` a key with allowlist `allowed` may call (`null`: any of them). */
export function chatModelsFor(
  models: readonly {
    readonly id: string;
    readonly capabilities: { readonly families: readonly string[] };
  }[],
  allowed: readonly string[] | null,
): string[] {
  return models
    .filter((model) => model.capabilities.families.includes('chat'))
    .filter((model) => allowed === null || allowed.includes(model.id))
    .map((model) => model.id);
}
