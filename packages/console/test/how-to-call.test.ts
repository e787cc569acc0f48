/// <reference types="node" />
import { readFileSync } from 'node:fs';
import type { ConsoleModel } from '@tollgate/protocol';
import { describe, expect, it } from 'vitest';
import {
  callSnippets,
  chatModelsFor,
  gatewayBaseUrl,
  KEY_PLACEHOLDER,
  MODEL_PLACEHOLDER,
  SNIPPET_IDS,
  type SnippetId,
} from '../src/how-to-call.js';
import { filled, priceRows } from '../src/model-prices.js';

/**
 * The how-to-call snippets (src/how-to-call.ts): a person pastes them, so the risk is a snippet
 * with the wrong address, the wrong key, or a Codex/Claude block that has drifted from the
 * recipe docs/agents.md documents (and its tests run). The doc is read here, at test time.
 */
const AGENTS_DOC = readFileSync(new URL('../../../docs/agents.md', import.meta.url), 'utf8');

/** The fenced block after `<!-- recipe: NAME -->` in docs/agents.md. */
function recipe(name: string): string {
  const match = new RegExp(`<!-- recipe: ${name} -->\\n\`\`\`\\w*\\n([\\s\\S]*?)\\n\`\`\``).exec(
    AGENTS_DOC,
  );
  if (match?.[1] === undefined) throw new Error(`docs/agents.md has no recipe ${name}`);
  return match[1];
}

/** What the doc's recipes name, and what the console puts in their place. */
const DOC = {
  root: 'http://127.0.0.1:8080',
  model: 'sim-chat',
  key: 'tgk_your_optional_key',
} as const;

const KEY = `tgk_${'a1B2c3'.repeat(8)}Z`;
const ORIGIN = 'https://gateway.example.com';

function snippet(id: SnippetId, key: string | null, model: string | null, origin = ORIGIN) {
  const found = callSnippets({ origin, key, model }).find((candidate) => candidate.id === id);
  if (found === undefined) throw new Error(`no snippet ${id}`);
  return found;
}

/** The doc's recipe with the gateway, model and key substituted as the console does. */
function docRecipe(name: string, root: string, model: string, key: string): string {
  return recipe(name)
    .replaceAll(DOC.root, root)
    .replaceAll(DOC.model, model)
    .replaceAll(DOC.key, key);
}

describe('the base URL', () => {
  it('is the page’s origin with /v1', () => {
    expect(gatewayBaseUrl('http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080/v1');
    expect(gatewayBaseUrl('https://gateway.example.com/')).toBe('https://gateway.example.com/v1');
  });
});

describe('Codex CLI and Claude Code: docs/agents.md’s recipes, only the address, model and key put in', () => {
  const recipes = ['codex-config', 'codex-run', 'claude-env', 'claude-run'] as const;

  it.each(recipes)('%s equals the recipe exactly with the doc’s own values', (id) => {
    expect(snippet(id, DOC.key, DOC.model, DOC.root).text).toBe(recipe(id));
  });

  it.each(recipes)('%s with the new key, this gateway and a chosen model', (id) => {
    expect(snippet(id, KEY, 'sim-vision', ORIGIN).text).toBe(
      docRecipe(id, ORIGIN, 'sim-vision', KEY),
    );
  });

  it.each(recipes)('%s with the placeholder where the key is not known', (id) => {
    expect(snippet(id, null, 'sim-chat').text).toBe(
      docRecipe(id, ORIGIN, 'sim-chat', KEY_PLACEHOLDER),
    );
  });

  it('puts the /v1 base in Codex’s provider and the root in ANTHROPIC_BASE_URL, and needs an optional key', () => {
    expect(snippet('codex-config', KEY, 'm').text).toContain(`base_url = "${ORIGIN}/v1"`);
    expect(snippet('claude-env', KEY, 'm').text).toContain(`ANTHROPIC_BASE_URL=${ORIGIN}\n`);
    for (const id of recipes) expect(snippet(id, KEY, 'm').keyNeed).toBe('optional');
  });
});

describe('curl and the OpenAI SDKs: the key, base URL and model filled in, a new Idempotency-Key per request', () => {
  it.each(['curl', 'python', 'javascript'] as const)('%s', (id) => {
    const text = snippet(id, KEY, 'sim-chat').text;
    expect(text).toContain(KEY);
    expect(text).toContain(`${ORIGIN}/v1`);
    expect(text).toContain('sim-chat');
    expect(text).toContain('Idempotency-Key');
    expect(text).not.toContain(KEY_PLACEHOLDER);
    expect(snippet(id, KEY, 'sim-chat').keyNeed).toBe('any');
  });

  it('curl names a fresh id the way README’s "Try it" makes one, and posts to /v1/chat/completions', () => {
    const text = snippet('curl', KEY, 'sim-chat').text;
    expect(text).toContain(`curl ${ORIGIN}/v1/chat/completions`);
    expect(text).toContain(`-H "Authorization: Bearer ${KEY}"`);
    expect(text).toContain(`-H "Idempotency-Key: $(node -p 'crypto.randomUUID()')"`);
    expect(JSON.parse(/-d '(.*)'$/m.exec(text)?.[1] ?? '')).toEqual({
      model: 'sim-chat',
      messages: [{ role: 'user', content: 'say hi' }],
    });
  });

  it('the SDKs send the header with each request', () => {
    expect(snippet('python', KEY, 'm').text).toContain(
      'extra_headers={"Idempotency-Key": str(uuid.uuid4())}',
    );
    expect(snippet('javascript', KEY, 'm').text).toContain(
      "{ headers: { 'Idempotency-Key': crypto.randomUUID() } }",
    );
  });

  it('without a key or a chat model, the placeholders', () => {
    // The Codex config names the key's variable, not the key; claude -p reads the environment.
    const withKey = SNIPPET_IDS.filter((id) => id !== 'codex-config' && id !== 'claude-run');
    for (const id of withKey) expect(snippet(id, null, null).text).toContain(KEY_PLACEHOLDER);
    expect(snippet('codex-config', null, null).text).toContain(`model = "${MODEL_PLACEHOLDER}"`);
    expect(snippet('curl', null, null).text).toContain(`"model":"${MODEL_PLACEHOLDER}"`);
  });
});

const model = (id: string, families: string[], pricing: Partial<ConsoleModel['pricing']> = {}) =>
  ({
    id,
    object: 'model',
    created: 0,
    owned_by: 'tollgate',
    capabilities: { families },
    pricing: { currency: 'CNY_MICRO', price_version: `${id}@1`, ...pricing },
  }) as ConsoleModel;

describe('the snippets’ model', () => {
  it('is a chat model the key may call', () => {
    const models = [
      model('embed', ['embeddings']),
      model('a', ['chat']),
      model('b', ['chat', 'ocr']),
    ];
    expect(chatModelsFor(models, null)).toEqual(['a', 'b']);
    expect(chatModelsFor(models, ['b', 'embed'])).toEqual(['b']);
    expect(chatModelsFor(models, ['embed'])).toEqual([]);
  });
});

describe('price rows: one per price, by its shape', () => {
  it('tokens per million, in the order input, cached input, output, reasoning', () => {
    const rows = priceRows(
      model('chat', ['chat'], {
        reasoning_per_million_tokens: 4,
        output_per_million_tokens: 3,
        input_per_million_tokens: 1,
        cached_input_per_million_tokens: 2,
      }),
    );
    expect(rows.map((row) => [row.label, row.micro])).toEqual([
      ['models.price.input', 1],
      ['models.price.cachedInput', 2],
      ['models.price.output', 3],
      ['models.price.reasoning', 4],
    ]);
  });

  it('images by size and quality, videos by size, H3 by resolution, reference images with the free ones', () => {
    const image = priceRows(
      model('img', ['images'], {
        per_image: { '256x256': { standard: 10_000, hd: 20_000 } },
        per_reference_image: 5_000,
        free_reference_images: 1,
      }),
    );
    expect(image).toEqual([
      {
        label: 'models.price.perImage',
        values: { size: '256x256', quality: 'standard' },
        micro: 10_000,
      },
      { label: 'models.price.perImage', values: { size: '256x256', quality: 'hd' }, micro: 20_000 },
      { label: 'models.price.perReferenceFree', values: { free: '1' }, micro: 5_000 },
    ]);
    const video = priceRows(
      model('vid', ['videos'], {
        per_second: { '640x360': 50_000 },
        per_second_with_audio: { '640x360': 70_000 },
        per_reference_image: 10_000,
      }),
    );
    expect(video.map((row) => [row.label, row.micro])).toEqual([
      ['models.price.perSecond', 50_000],
      ['models.price.perSecondAudio', 70_000],
      ['models.price.perReference', 10_000],
    ]);
    const h3 = priceRows({
      ...model('h3', ['h3'], { input_per_million_tokens: 2_000_000, per_reference_image: 5_000 }),
      h3_pricing: {
        h3_per_second: { '480p': 20_000 },
        h3_per_second_with_audio: { '480p': 30_000 },
        free_reference_images: 5,
      },
    });
    expect(h3).toEqual([
      { label: 'models.price.input', values: {}, micro: 2_000_000 },
      { label: 'models.price.h3PerSecond', values: { resolution: '480p' }, micro: 20_000 },
      { label: 'models.price.h3PerSecondAudio', values: { resolution: '480p' }, micro: 30_000 },
      { label: 'models.price.perReferenceFree', values: { free: '5' }, micro: 5_000 },
    ]);
    expect(filled('Per image ({size}, {quality})', { size: '256x256', quality: 'hd' })).toBe(
      'Per image (256x256, hd)',
    );
  });
});
