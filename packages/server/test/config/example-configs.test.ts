import { readdirSync, readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadSettings, parseConfig, type Settings } from '../../src/config/load.js';
import {
  configSchema,
  limitsSchema,
  modelSchema,
  postgresSettingsSchema,
  serverSchema,
  timeoutsSchema,
  upstreamSchema,
} from '../../src/config/schema.js';
import { channelsOf } from '../../src/routing/channels.js';
import { ProviderRegistry } from '../../src/providers/registry.js';

/**
 * The risk: an operator copies an example from `examples/config/` (or the table in
 * docs/configuration.md) and the gateway refuses to start, or starts and cannot reach a keyless
 * server. Every example goes through the loader the server uses (`loadSettings` with
 * `TOLLGATE_CONFIG`), and its provider registry is built; nothing is contacted (undici pools
 * connect on first use).
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const examplesDir = path.join(root, 'examples/config');
const examples = readdirSync(examplesDir)
  .filter((name) => name.endsWith('.json'))
  .sort();
const configurationDoc = readFileSync(path.join(root, 'docs/configuration.md'), 'utf8');

/** The environment an operator would give: the file, and a secret for every `api_key_env`. */
function environmentFor(file: string): NodeJS.ProcessEnv {
  const raw = JSON.parse(readFileSync(file, 'utf8')) as {
    upstreams: Record<string, { api_key_env?: string }>;
  };
  const env: NodeJS.ProcessEnv = { TOLLGATE_CONFIG: file };
  for (const upstream of Object.values(raw.upstreams))
    if (upstream.api_key_env !== undefined) env[upstream.api_key_env] = 'test-secret';
  return env;
}

const caller = { accountId: 'acct_example' };

describe('example configuration files', () => {
  it('the folder holds the examples the docs promise', () => {
    expect(examples).toEqual(
      expect.arrayContaining([
        'deepseek.json',
        'jina.json',
        'ollama.json',
        'openai.json',
        'qwen.json',
        'vllm.json',
      ]),
    );
  });

  it.each(examples)('%s loads through the server loader and builds its providers', async (name) => {
    const file = path.join(examplesDir, name);
    const settings = loadSettings(environmentFor(file));
    expect(settings.configSource).toBe(file);
    expect(settings.config.models.length).toBeGreaterThan(0);
    const registry = new ProviderRegistry(settings.config, settings.upstreamKeys, null);
    try {
      for (const model of settings.config.models) {
        // Every family of every model gets its adapter (constructing one sends nothing).
        for (const { upstream } of channelsOf(model))
          for (const family of model.families) {
            if (family === 'chat' || family === 'ocr')
              expect(registry.chat(upstream, caller)).toBeDefined();
            if (family === 'embeddings')
              expect(registry.embeddings(upstream, caller)).toBeDefined();
            if (family === 'rerank') expect(registry.rerank(upstream, caller)).toBeDefined();
            if (family === 'images')
              expect(registry.tasks(upstream, 'image', caller)).toBeDefined();
            if (family === 'videos')
              expect(registry.tasks(upstream, 'video', caller)).toBeDefined();
            if (family === 'h3') expect(registry.tasks(upstream, 'h3', caller)).toBeDefined();
          }
      }
    } finally {
      await registry.close();
    }
  });

  it.each(examples)('%s is named in docs/configuration.md', (name) => {
    expect(configurationDoc).toContain(`examples/config/${name}`);
  });

  it('an example whose key variable is unset refuses to start, naming the upstream and the variable', () => {
    const file = path.join(examplesDir, 'openai.json');
    expect(() => loadSettings({ TOLLGATE_CONFIG: file })).toThrow(ConfigError);
    expect(() => loadSettings({ TOLLGATE_CONFIG: file })).toThrow(
      'upstreams.openai.api_key_env: environment variable OPENAI_API_KEY is not set',
    );
  });
});

describe('docs/configuration.md names every configuration field', () => {
  it('its JSON examples are valid configurations', () => {
    const blocks = [...configurationDoc.matchAll(/```json\n([\s\S]*?)```/g)].map(
      (match) => match[1] ?? '',
    );
    const configs = blocks.filter((block) => block.includes('"upstreams"'));
    expect(configs.length).toBeGreaterThan(0);
    for (const block of configs)
      expect(() => parseConfig(JSON.parse(block), 'docs/configuration.md')).not.toThrow();
  });

  const sections = {
    top: configSchema.shape,
    'upstreams.<name>': upstreamSchema.shape,
    'upstreams.<name>.timeouts': timeoutsSchema.shape,
    'models[]': modelSchema.shape,
    limits: limitsSchema.shape,
    server: serverSchema.shape,
    postgres: postgresSettingsSchema.shape,
  };
  it.each(Object.entries(sections))('%s', (_section, shape) => {
    // Written as `field` or as the end of a dotted path (`models[].field`).
    const missing = Object.keys(shape).filter(
      (field) => !new RegExp(`[\`.]${field}\``).test(configurationDoc),
    );
    expect(missing).toEqual([]);
  });
});

/**
 * The risk: a keyless server (vLLM, Ollama) is sent an `Authorization` header it never asked
 * for, or a keyed one gets none. Both examples are pointed at a loopback server that records
 * what it was sent.
 */
describe('upstream keys on the wire', () => {
  let server: Server;
  let baseUrl: string;
  const seen: IncomingHttpHeaders[] = [];
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'tollgate-example-'));
    server = createServer((request, response) => {
      seen.push(request.headers);
      request.resume();
      request.on('end', () => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({
            object: 'list',
            data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }],
            usage: { prompt_tokens: 2, total_tokens: 2 },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  /** The example with every upstream's base URL pointed at the recording server. */
  function loadPointedAtServer(name: string, env: NodeJS.ProcessEnv = {}): Settings {
    const raw = JSON.parse(readFileSync(path.join(examplesDir, name), 'utf8')) as {
      upstreams: Record<string, { base_url?: string }>;
    };
    for (const upstream of Object.values(raw.upstreams)) upstream.base_url = baseUrl;
    const file = path.join(dir, name);
    writeFileSync(file, JSON.stringify(raw));
    return loadSettings({ ...env, TOLLGATE_CONFIG: file });
  }

  async function embedOnce(settings: Settings, modelId: string): Promise<IncomingHttpHeaders> {
    const registry = new ProviderRegistry(settings.config, settings.upstreamKeys, null);
    try {
      const model = settings.config.models.find((candidate) => candidate.id === modelId);
      if (model === undefined) throw new Error(`no model ${modelId}`);
      seen.length = 0;
      const [channel] = channelsOf(model);
      if (channel === undefined) throw new Error(`no channel for ${modelId}`);
      const result = await registry.embeddings(channel.upstream, caller).embed({
        model: channel.model,
        input: ['hello'],
        dimensions: undefined,
      });
      expect(result.promptTokens).toBe(2);
      expect(seen).toHaveLength(1);
      return seen[0] ?? {};
    } finally {
      await registry.close();
    }
  }

  it('a keyless upstream (vLLM without api_key_env) starts and sends no Authorization header', async () => {
    const settings = loadPointedAtServer('vllm.json');
    expect(settings.upstreamKeys).toEqual({});
    const headers = await embedOnce(settings, 'bge-m3');
    expect(headers.authorization).toBeUndefined();
  });

  it('a keyed upstream (OpenAI) sends its key from the named variable as a bearer token', async () => {
    const settings = loadPointedAtServer('openai.json', { OPENAI_API_KEY: 'sk-from-env' });
    const headers = await embedOnce(settings, 'text-embedding-3-small');
    expect(headers.authorization).toBe('Bearer sk-from-env');
  });
});
