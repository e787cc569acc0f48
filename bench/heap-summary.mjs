#!/usr/bin/env node
// Allocation per request from a sampling heap profile (bench/heap-sampler.mjs), by function: the
// functions that allocated most themselves (inlined callees count as theirs, as V8 reports them),
// and the same bytes by the nearest frame of the gateway's own code on the stack.
//
//   node bench/heap-summary.mjs --profile FILE --requests N [--top 30]
import { readFileSync } from 'node:fs';
import { parseFlags } from './lib.mjs';

const flags = parseFlags();
if (flags.profile === undefined || flags.requests === undefined)
  throw new Error('usage: node bench/heap-summary.mjs --profile FILE --requests N [--top 30]');
const profile = JSON.parse(readFileSync(flags.profile, 'utf8'));
const requests = Number(flags.requests);
const top = Number(flags.top ?? 30);

const bySelf = new Map();
const byOwnFrame = new Map();
let total = 0;
const nameOf = ({ functionName, url, lineNumber }) =>
  `${functionName || '(anonymous)'} ${url
    .replace(/^file:\/\//, '')
    .replace(/.*\/node_modules\//, '')
    .replace(/.*\/packages\/server\//, '')}:${lineNumber + 1}`;
const ours = (name) => /(^| )dist[^/]*\//.test(name);
const add = (map, key, bytes) => map.set(key, (map.get(key) ?? 0) + bytes);
// Iterative: a deep async stack must not overflow this script's own.
const pending = [{ node: profile.head, stack: [] }];
while (pending.length > 0) {
  const { node, stack } = pending.pop();
  const name = nameOf(node.callFrame);
  const path = [...stack, name];
  if (node.selfSize > 0) {
    total += node.selfSize;
    add(bySelf, name, node.selfSize);
    add(byOwnFrame, path.findLast(ours) ?? '(no frame of the gateway)', node.selfSize);
  }
  for (const child of node.children) pending.push({ node: child, stack: path });
}
const kb = (bytes) => (bytes / requests / 1024).toFixed(2);
const table = (title, map) => {
  console.log(`\n${title}\n\n| function | KB per request |\n|---|---:|`);
  for (const [name, bytes] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`| \`${name}\` | ${kb(bytes)} |`);
};
console.log(`requests: ${requests}; allocated per request (sampled): ${kb(total)} KB`);
table('Allocated by the function itself:', bySelf);
table("By the nearest frame of the gateway's own code:", byOwnFrame);
