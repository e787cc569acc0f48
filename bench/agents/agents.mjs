// Helpers of bench/agents/run.sh (no dependencies): the recipes of docs/agents.md, a free port,
// and the gateway-side checks of one agent's key. Every subcommand prints JSON or plain text on
// stdout and exits 1 with one line on stderr when something is wrong.
//
//   node agents.mjs free-port
//   node agents.mjs recipe DOC NAME [--port P] [--key K]   the marked block, placeholders replaced
//   node agents.mjs recipe DOC NAME [--model M]             … and the model id the recipe names
//   node agents.mjs codex-quiet CONFIG_FILE                 adds the quiet settings the recipe lacks
//   node agents.mjs compaction WIRE_LOG                     what is missing of a compaction, if anything
//   node agents.mjs gateway-config OUT                      the default configuration plus models
//                                                          served through the simulator's Responses
//                                                          and Messages protocols
//   node agents.mjs records BASE KEY PATH WIRE_LOG          the key's records, checked
//   node agents.mjs wire WIRE_LOG [--failures]              the exchanges wire-log.mjs recorded
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { createServer } from 'node:net';
import { URLSearchParams } from 'node:url';

const [command, ...args] = process.argv.slice(2);

function fail(message) {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

function option(name) {
  const index = args.indexOf(`--${name}`);
  return index === -1 ? undefined : args[index + 1];
}

// The recipes' placeholders: the only things run.sh replaces in them.
const DOC_ORIGIN = 'http://127.0.0.1:8080';
const DOC_KEY = 'tgk_your_optional_key';
const DOC_MODEL = 'sim-chat';

/**
 * The gateway's configuration: the embedded default, plus `sim-chat-responses` and
 * `sim-chat-messages`, the simulator's `sim-chat` reached through an upstream speaking OpenAI's
 * Responses API and one speaking Anthropic's Messages API (docs/agents.md, "Upstream
 * protocols"), so each agent also runs a turn on a channel of its own protocol.
 */
async function gatewayConfig(out) {
  const { defaultConfig } = await import(
    new URL('../../packages/server/dist/config/default-config.js', import.meta.url).href
  );
  const chat = defaultConfig.models.find((model) => model.id === 'sim-chat');
  const through = (id, upstream) => ({
    ...chat,
    id,
    upstream: undefined,
    channels: [{ id: `${id}~0`, upstream, model: 'sim-chat' }],
  });
  const config = {
    ...defaultConfig,
    upstreams: {
      ...defaultConfig.upstreams,
      'simulator-responses': { kind: 'simulator', chat_api: 'responses' },
      'simulator-messages': { kind: 'simulator', chat_api: 'messages' },
    },
    models: [
      ...defaultConfig.models,
      through('sim-chat-responses', 'simulator-responses'),
      through('sim-chat-messages', 'simulator-messages'),
    ],
  };
  writeFileSync(out, JSON.stringify(config, null, 2));
}

/** The fenced code block right after `<!-- recipe: NAME -->` (blank lines between allowed). */
function recipe(doc, name) {
  const text = readFileSync(doc, 'utf8');
  const marker = `<!-- recipe: ${name} -->`;
  const at = text.indexOf(marker);
  if (at === -1) fail(`${doc}: no "${marker}"`);
  if (text.indexOf(marker, at + 1) !== -1) fail(`${doc}: "${marker}" appears twice`);
  const block = /^\s*```[^\n]*\n([\s\S]*?)\n```/.exec(text.slice(at + marker.length));
  if (!block) fail(`${doc}: "${marker}" is not followed by a fenced code block`);
  return block[1] + '\n';
}

/** Replaces every occurrence of `from`, and refuses a recipe that has none of it. */
function replaceRequired(text, from, to, what) {
  if (!text.includes(from)) fail(`recipe ${what}: expected the placeholder "${from}" in it`);
  return text.split(from).join(to);
}

// A free port for the gateway this script starts, chosen below Linux's ephemeral range (32768
// and up by default), as the tests' helpers/processes.ts does: a port from `listen(0)` is in that
// range, and between this check and the gateway's own listen it can become the local end of
// another program's outgoing connection (CI's benchmark smoke runs beside this one), which makes
// that listen fail.
async function freePort() {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const server = createServer();
    const listening = await new Promise((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (listening) {
      await new Promise((resolve) => server.close(resolve));
      return port;
    }
  }
  throw new Error('no free port between 20000 and 32000 after 50 tries');
}

// Codex's own traffic to OpenAI and GitHub (docs/agents.md, the prose after codex-run). A TOML
// key must sit in its table: a second `[features]` header would be a duplicate-table error.
function codexQuiet(file) {
  const lines = readFileSync(file, 'utf8').replace(/\n$/, '').split('\n');
  const header = (line) => /^\s*\[/.test(line);
  /** [first, end) of a table's lines (after its header); the top level is table ''. */
  const table = (name) => {
    const first = name === '' ? 0 : lines.findIndex((line) => line.trim() === `[${name}]`) + 1;
    if (name !== '' && first === 0) return null;
    const next = lines.findIndex((line, index) => index >= first && header(line));
    return [first, next === -1 ? lines.length : next];
  };
  const has = (name, key) => {
    const range = table(name);
    return (
      range !== null &&
      lines.slice(...range).some((line) => new RegExp(`^\\s*${key}\\s*=`).test(line))
    );
  };
  const added = [];
  const set = (name, key, value) => {
    if (has(name, key)) return;
    const range = table(name);
    if (range === null) lines.push('', `[${name}]`, `${key} = ${value}`);
    else lines.splice(name === '' ? 0 : range[0], 0, `${key} = ${value}`);
    added.push(name === '' ? `${key} = ${value}` : `[${name}] ${key} = ${value}`);
  };
  set('', 'check_for_update_on_startup', 'false');
  set('analytics', 'enabled', 'false');
  set('features', 'plugins', 'false');
  writeFileSync(file, lines.join('\n') + '\n');
  return added;
}

function getJson(url, key) {
  return new Promise((resolve, reject) => {
    get(url, { headers: { authorization: `Bearer ${key}` } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => {
        if (response.statusCode !== 200) fail(`GET ${url}: ${response.statusCode} ${text}`);
        resolve(JSON.parse(text));
      });
    }).on('error', reject);
  });
}

/** The exchanges wire-log.mjs recorded, each with how its stream (if any) ended. */
function exchanges(file) {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const exchange = JSON.parse(line);
      const events = [...(exchange.response_body ?? '').matchAll(/^event: *(\S+)/gm)].map(
        (match) => match[1],
      );
      exchange.stream_end = events.at(-1) ?? null;
      exchange.request_id = exchange.response_headers?.['x-service-request-id'] ?? null;
      return exchange;
    });
}

const STREAM_OK = new Set(['response.completed', 'message_stop']);
const failed = (exchange) =>
  exchange.error !== undefined ||
  !(exchange.status >= 200 && exchange.status < 300) ||
  (exchange.stream_end !== null && !STREAM_OK.has(exchange.stream_end));

function oneLine(exchange) {
  const end = exchange.stream_end ? `, stream ends with ${exchange.stream_end}` : '';
  const error = exchange.error ? `, ${exchange.error}` : '';
  return `${exchange.method} ${exchange.url} -> ${exchange.status ?? '-'} in ${exchange.ms} ms${end}${error} (${exchange.request_id ?? 'no X-Service-Request-Id'})`;
}

/** A body fit to read: long strings cut, tools reduced to their names. */
function trimmed(value, depth = 0) {
  if (typeof value === 'string')
    return value.length > 400 ? `${value.slice(0, 400)}…[+${value.length - 400} chars]` : value;
  if (Array.isArray(value)) return value.map((item) => trimmed(item, depth + 1));
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value).map(([name, item]) => [
        name,
        name === 'tools' && Array.isArray(item) && depth === 0
          ? item.map(
              (tool) =>
                `${tool.type ?? 'tool'}:${tool.name ?? '?'} {${Object.keys(tool).join(',')}}`,
            )
          : trimmed(item, depth + 1),
      ]),
    );
  return value;
}

// With --failures, a failing exchange is shown in full (request headers and body, answer
// headers and body) the first time its answer is seen; a retry answered the same is one line.
function wire(file, failures) {
  const all = exchanges(file);
  const lines = [`${all.length} exchange(s) recorded in ${file} (one JSON line each, in full)`];
  const shown = new Set();
  for (const exchange of all) {
    lines.push(`  ${oneLine(exchange)}`);
    const answer =
      `${exchange.status} ${exchange.error ?? ''} ${exchange.response_body ?? ''}`.replace(
        /req_\w+|"sequence_number":\d+/g,
        '',
      );
    if (!failures || !failed(exchange) || shown.has(answer)) continue;
    shown.add(answer);
    const indent = (text) => text.replace(/\n/g, '\n      ');
    lines.push('    request headers: ' + JSON.stringify(exchange.request_headers));
    lines.push(
      '    request body (strings over 400 characters cut, tools by name):\n      ' +
        indent(JSON.stringify(trimmed(exchange.request_body), null, 1)),
    );
    lines.push('    answer headers: ' + JSON.stringify(exchange.response_headers ?? null));
    const body = exchange.response_body ?? '';
    lines.push(
      `    answer body${body.length > 6000 ? ' (last 6000 characters)' : ''}:\n      ` +
        indent(body.slice(-6000)),
    );
  }
  return lines.join('\n');
}

/**
 * Codex compacted in the stream and went on from it (docs/agents.md, "Compaction"): a request
 * whose input ends with a compaction_trigger, answered with a compaction item, and a later
 * request carrying that item. The problems, none when it did.
 */
function compaction(file) {
  const posts = exchanges(file).filter((exchange) => exchange.method === 'POST');
  const input = (exchange) => {
    const body =
      typeof exchange.request_body === 'string'
        ? JSON.parse(exchange.request_body)
        : exchange.request_body;
    return Array.isArray(body?.input) ? body.input : [];
  };
  const at = posts.findIndex((exchange) => input(exchange).at(-1)?.type === 'compaction_trigger');
  if (at === -1)
    return ['no request ended its input with a compaction_trigger: Codex did not compact'];
  const problems = [];
  if (!/"type":"compaction"/.test(posts[at].response_body ?? ''))
    problems.push(
      `the compaction request was not answered with a compaction item: ${oneLine(posts[at])}`,
    );
  if (
    !posts
      .slice(at + 1)
      .some((exchange) => input(exchange).some((item) => item.type === 'compaction'))
  )
    problems.push('no later request went on from the compaction item');
  return problems;
}

/** Every record of the key (GET /v1/requests, all pages), checked against one route and the wire. */
async function records(base, key, path, wireLog) {
  const all = [];
  let cursor = null;
  do {
    const query = new URLSearchParams({ limit: '100' });
    if (cursor) query.set('cursor', cursor);
    const page = await getJson(`${base}/v1/requests?${query}`, key);
    all.push(...page.data);
    cursor = page.has_more ? page.next_cursor : null;
  } while (cursor);
  const problems = [];
  if (all.length === 0) problems.push(`no record for this key: the agent never reached ${path}`);
  for (const record of all) {
    const where = `${record.id} (${record.method} ${record.path}, ${record.model})`;
    if (record.status !== 'succeeded')
      problems.push(`${where}: status ${record.status}, error ${JSON.stringify(record.error)}`);
    if (record.path !== path) problems.push(`${where}: path is not ${path}`);
    if (!record.bill || !Number.isInteger(record.bill.amount) || record.bill.captured !== true)
      problems.push(`${where}: bill ${JSON.stringify(record.bill)}`);
  }
  // What the agent saw must be what the gateway recorded: every POST it sent is one of these
  // records, answered in full, and no record was made of anything it did not send.
  const posts = exchanges(wireLog).filter((exchange) => exchange.method === 'POST');
  for (const exchange of posts.filter(failed))
    problems.push(`the agent was answered: ${oneLine(exchange)}`);
  const ids = new Set(all.map((record) => record.id));
  const seen = new Set(posts.map((exchange) => exchange.request_id));
  for (const exchange of posts)
    if (!ids.has(exchange.request_id))
      problems.push(`not among the key's records: ${oneLine(exchange)}`);
  for (const record of all)
    if (!seen.has(record.id))
      problems.push(`${record.id}: recorded, but no answer on the wire named it`);
  return {
    count: all.length,
    wire_posts: posts.length,
    sum: all.reduce((total, record) => total + (record.bill?.amount ?? 0), 0),
    records: all.map((record) => ({
      id: record.id,
      status: record.status,
      path: record.path,
      model: record.model,
      amount: record.bill?.amount ?? null,
      pricing_rule: record.bill?.pricing_rule ?? null,
      usage: record.usage,
    })),
    problems,
  };
}

switch (command) {
  case 'free-port':
    console.log(await freePort());
    break;
  case 'recipe': {
    const [doc, name] = args;
    let text = recipe(doc, name);
    const port = option('port');
    const key = option('key');
    if (port) text = replaceRequired(text, DOC_ORIGIN, `http://127.0.0.1:${port}`, name);
    if (key) text = replaceRequired(text, DOC_KEY, key, name);
    const model = option('model');
    if (model) text = replaceRequired(text, DOC_MODEL, model, name);
    process.stdout.write(text);
    break;
  }
  case 'gateway-config':
    await gatewayConfig(args[0]);
    break;
  case 'codex-quiet':
    console.log(codexQuiet(args[0]).join('; '));
    break;
  case 'records':
    console.log(JSON.stringify(await records(...args)));
    break;
  case 'compaction':
    console.log(compaction(args[0]).join('\n'));
    break;
  case 'wire':
    console.log(wire(args[0], args.includes('--failures')));
    break;
  default:
    fail(`unknown command ${command}`);
}
