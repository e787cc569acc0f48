// `ledger-floor.mjs --store-loop`: the SQLite floors' stores alone, no HTTP, each measurement in a
// process of its own (`--store-loop-one`), and the table of CPU per request it prints.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sha256 } from './gateway.mjs';
import { median } from './reports.mjs';
import { FLOOR_SCRIPT, VARIANTS } from './sqlite.mjs';
import { ledgerFigures } from './sqlite-checks.mjs';
import { openStore } from './sqlite-store.mjs';

// The answer kept per request, the size of the harness mock's chat answer.
export const LOOP_ANSWER = JSON.stringify({
  id: 'chatcmpl-bench0001',
  object: 'chat.completion',
  created: 1700000000,
  model: 'gpt-4o-mini',
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: 'Hello! This is a fixed answer from the benchmark mock upstream.',
        refusal: null,
      },
      logprobs: null,
      finish_reason: 'stop',
    },
  ],
  usage: { prompt_tokens: 12, completion_tokens: 14, total_tokens: 26 },
  system_fingerprint: 'fp_bench',
});

/**
 * `--store-loop`: each variant's store alone, no HTTP — `group` claims in one commit, then their
 * `group` finishes in the next — in a fresh process and database per measurement, pinned to one
 * CPU when taskset is there, the variants' order rotated every round. Prints the CPU per request
 * (the whole process: main thread and checkpoint thread) and each variant ÷ random-ids per round.
 */
export async function storeLoop(flags) {
  const requests = Number(flags.requests ?? 20_000);
  const rounds = Number(flags.rounds ?? 3);
  const group = Number(flags.group ?? 16);
  const variants = (flags.variants ?? VARIANTS.join(',')).split(',');
  const pin =
    spawnSync('taskset', ['-c', '0', 'true']).status === 0
      ? ['taskset', '-c', String(flags.cpu ?? '0')]
      : [];
  const measured = Object.fromEntries(variants.map((variant) => [variant, []]));
  let failed = 0;
  for (let round = 0; round < rounds; round += 1) {
    const order = variants.map((_, index) => variants[(index + round) % variants.length]);
    for (const variant of order) {
      const command = [
        ...pin,
        process.execPath,
        FLOOR_SCRIPT,
        '--store-loop-one',
        variant,
        requests,
        group,
      ];
      const run = spawnSync(command[0], command.slice(1).map(String), { encoding: 'utf8' });
      const result = run.status === 0 ? JSON.parse(run.stdout.trim().split('\n').at(-1)) : null;
      if (result === null || !result.clean) {
        failed += 1;
        console.log(`  ${variant}: FAILED ${run.stdout}${run.stderr}`);
        measured[variant].push({ cpuUsPerReq: NaN, projectorCpuUsPerReq: NaN, wallUsPerReq: NaN });
      } else measured[variant].push(result);
    }
  }
  const format = (value) => (Number.isFinite(value) ? value.toFixed(2) : String(value));
  const whole = (value) => (Number.isFinite(value) ? value.toFixed(0) : String(value));
  const reference = measured['random-ids'];
  console.log(
    `\nThe store alone (--store-loop: ${requests} requests after ${Math.round(requests / 10)} of warm-up, ${group} claims or finishes per commit, ${rounds} round(s), variants rotated; ${pin.length ? `pinned to CPU ${flags.cpu ?? 0}` : 'not pinned'}):\n`,
  );
  console.log(
    '| variant | CPU µs/req (median; rounds) | ÷ random-ids (median; rounds) | apart projector: CPU µs/req; (store + projector) ÷ random-ids | wall µs/req (median) |',
  );
  console.log('|---|---|---|---|---|');
  const cells = (values) => `${format(median(values))} (${values.map(format).join(', ')})`;
  for (const variant of variants) {
    const cpu = measured[variant].map((result) => result.cpuUsPerReq);
    const apart = measured[variant].map((result) => result.projectorCpuUsPerReq ?? 0);
    const ratios = reference ? cpu.map((value, round) => value / reference[round].cpuUsPerReq) : [];
    const total = reference
      ? cpu.map((value, round) => (value + apart[round]) / reference[round].cpuUsPerReq)
      : [];
    console.log(
      `| ${variant} | ${whole(median(cpu))} (${cpu.map(whole).join(', ')}) | ${reference ? cells(ratios) : '–'} | ${apart.some((value) => value > 0) ? `${whole(median(apart))} (${apart.map(whole).join(', ')}); ${reference ? cells(total) : '–'}` : '–'} | ${whole(median(measured[variant].map((result) => result.wallUsPerReq)))} |`,
    );
  }
  return failed === 0 ? 0 : 1;
}

/** One measurement of `--store-loop`, in its own process: prints one JSON line. */
export async function storeLoopOne(variant, requests, group) {
  const dir = mkdtempSync(path.join(tmpdir(), `floor-loop-${variant}-`));
  const file = path.join(dir, 'floor.sqlite');
  const store = openStore(file, { variant });
  const principal = { keyId: 'key', accountId: 'acct' };
  const fingerprint = sha256(LOOP_ANSWER);
  const usage = { prompt_tokens: 12, completion_tokens: 14, total_tokens: 26 };
  const reserve = 6_000;
  const batch = async () => {
    // The client's idempotency keys are random (the harness sends a fresh UUID per request).
    const claimed = await Promise.all(
      Array.from({ length: group }, () =>
        store.claim(
          principal,
          randomUUID(),
          fingerprint,
          '/v1/chat/completions',
          'gpt-4o-mini',
          reserve,
        ),
      ),
    );
    await Promise.all(
      claimed.map((ids) => store.finish(principal, ids, reserve, usage, 200, LOOP_ANSWER)),
    );
  };
  for (let done = 0; done < requests / 10; done += group) await batch();
  const apartBefore = await store.catchUp();
  const cpuBefore = process.cpuUsage();
  const wallBefore = process.hrtime.bigint();
  let done = 0;
  for (; done < requests; done += group) await batch();
  // The read model's work for these requests, within the measured window (the apart projector's
  // in its own process: reported beside, not in this process's CPU).
  const apartAfter = await store.catchUp();
  const cpu = process.cpuUsage(cpuBefore);
  const wall = Number(process.hrtime.bigint() - wallBefore) / 1000;
  await store.close();
  const { clean, figures } = ledgerFigures(file);
  rmSync(dir, { recursive: true, force: true });
  console.log(
    JSON.stringify({
      variant,
      requests: done,
      cpuUsPerReq: (cpu.user + cpu.system) / done,
      projectorCpuUsPerReq: apartAfter ? (apartAfter.cpuUs - apartBefore.cpuUs) / done : 0,
      wallUsPerReq: wall / done,
      clean,
      figures,
    }),
  );
}
