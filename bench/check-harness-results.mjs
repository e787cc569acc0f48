#!/usr/bin/env node
// Fails (exit 1) when a run of the reference harness did not measure what it claims: a target
// that was expected but unavailable, a failed verification (chat with usage, stream to [DONE],
// embeddings), or any error or non-2xx answer in any phase of any round. Not a timing check.
// Usage: node bench/check-harness-results.mjs path/to/results.json
import { readFileSync } from 'node:fs';

const [file] = process.argv.slice(2);
if (file === undefined) throw new Error('usage: check-harness-results.mjs results.json');
const { rows, raw } = JSON.parse(readFileSync(file, 'utf8'));
const problems = [];
for (const row of rows) {
  if (row.unavailable) {
    problems.push(`${row.name}: unavailable (${row.unavailable})`);
    continue;
  }
  for (const check of ['chat', 'stream', 'embeddings']) {
    const result = row.verify?.[check];
    // The passthrough and the direct mock answer embeddings too; every target must pass all three.
    if (result !== undefined && result.ok !== true)
      problems.push(`${row.name}: verification of ${check} failed: ${JSON.stringify(result)}`);
  }
}
for (const target of Object.values(raw)) {
  target.rounds.forEach((phases, round) => {
    for (const [phase, result] of Object.entries(phases)) {
      if (result === null || typeof result !== 'object') continue;
      const failures =
        (result.errors ?? 0) +
        (result.non2xx ?? 0) +
        (result.dropped ?? 0) +
        (result.badStream ?? 0);
      const statuses = Object.keys(result.statusCounts ?? {}).filter(
        (status) => !/^2\d\d$/.test(status),
      );
      if (result.error)
        problems.push(`${target.name} round ${round + 1} ${phase}: ${result.error}`);
      if (failures > 0 || statuses.length > 0)
        problems.push(
          `${target.name} round ${round + 1} ${phase}: ${failures} failed, statuses ${JSON.stringify(result.statusCounts ?? {})}, samples ${JSON.stringify(result.errorSamples ?? [])}`,
        );
      if ((result.ok ?? 1) === 0)
        problems.push(`${target.name} round ${round + 1} ${phase}: nothing succeeded`);
    }
  });
}
if (problems.length > 0) {
  console.error(`benchmark did not measure cleanly:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(
  `benchmark results clean: ${rows.map((row) => row.name).join(', ')} (every answer 2xx)`,
);
