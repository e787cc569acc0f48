// Helpers shared by the benchmark scripts.
import { readFileSync } from 'node:fs';

/** `--name value` pairs from the command line. */
export function parseFlags(argv = process.argv.slice(2)) {
  const flags = {};
  for (let index = 0; index + 1 < argv.length; index += 2)
    flags[argv[index].replace(/^--/, '')] = argv[index + 1];
  return flags;
}

/** Resident memory of a process, in MiB, from /proc. */
export function rssMiB(pid) {
  return (
    Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024
  );
}
