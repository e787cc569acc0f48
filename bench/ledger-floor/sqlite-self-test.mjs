// `ledger-floor.mjs --self-test`: each SQLite variant end to end (its gateway in a child process,
// then second attempts on its file in this one), the ledger clean.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  checkSelfTestFigures,
  gatewayBurst,
  secondAttemptsRefused,
  testUpstream,
} from './self-test.mjs';
import { Database, FLOOR_SCRIPT } from './sqlite.mjs';
import { ledgerFigures } from './sqlite-checks.mjs';
import { openStore } from './sqlite-store.mjs';

/**
 * Each variant end to end, in its own process behind a small upstream: every answer 2xx and
 * billed once, a replayed idempotency key refused (409) without a second capture, and then, on
 * the same file in this process, a second finish of a captured request and a second claim of a
 * used key both refused; the ledger clean with exactly what was answered captured. Exit code.
 */
export async function selfTest(variants) {
  const upstream = await testUpstream();
  const requests = 24;
  // The variants side by side (each in its own process and directory): most of a variant's time
  // is its process starting.
  const outcomes = await Promise.all(
    variants.map(async (variant) => {
      const problems = [];
      const dir = mkdtempSync(path.join(tmpdir(), `floor-self-test-${variant}-`));
      try {
        await selfTestOne(variant, dir, upstream.address().port, requests, problems);
      } catch (error) {
        problems.push(String(error?.stack ?? error));
      }
      rmSync(dir, { recursive: true, force: true });
      return problems;
    }),
  );
  upstream.close();
  outcomes.forEach((problems, index) =>
    console.log(
      `  ${variants[index]}: ${problems.length === 0 ? `ok (${requests} requests billed once, a replayed key refused, a second finish and a second claim refused with a hold open, ledger clean)` : `FAILED: ${problems.join('; ')}`}`,
    ),
  );
  return outcomes.every((problems) => problems.length === 0) ? 0 : 1;
}

async function selfTestOne(variant, dir, upstreamPort, requests, problems) {
  await gatewayBurst(
    FLOOR_SCRIPT,
    {
      UPSTREAM_URL: `http://127.0.0.1:${upstreamPort}`,
      FLOOR_DATA_DIR: dir,
      FLOOR_VARIANT: variant,
    },
    requests,
    problems,
  );
  const file = path.join(dir, 'floor.sqlite');
  const store = openStore(file, { variant });
  try {
    const reader = new Database(file, { readonly: true });
    const captured = variant.startsWith('event-log')
      ? reader
          .prepare(
            `select c.request_id request, c.amount reserve from events c join events f
               on f.request_id = c.request_id and f.kind = 'finish' where c.kind = 'claim' limit 1`,
          )
          .get()
      : reader
          .prepare(
            `select id request, hold_id hold, reserve_amount reserve from requests where status = 'succeeded' limit 1`,
          )
          .get();
    reader.close();
    await secondAttemptsRefused(store, captured, problems);
    await store.catchUp();
  } finally {
    await store.close();
  }
  const { clean, figures } = ledgerFigures(file);
  checkSelfTestFigures(clean, figures, requests, problems);
}
