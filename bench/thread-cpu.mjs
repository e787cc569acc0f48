#!/usr/bin/env node
// On-CPU time of each of the gateway's threads, from /proc (Linux), per request of a window.
// A `--cpu-prof` profile counts a worker's samples while it waits in a blocking native call
// (the WAL checkpointer's fsyncs), so its "busy" time is wall time; the kernel's utime + stime
// per thread is what the thread really took from the core. The checkpoint thread is the one that
// wrote most in the window (it copies WAL pages into the database file; the main thread writes
// the WAL itself and is reported apart). Exits 0 and prints nothing useful off Linux.
//
//   node bench/thread-cpu.mjs snapshot --pid PID > before.json
//   node bench/thread-cpu.mjs report --before before.json --after after.json --requests N
import { readFileSync, readdirSync } from 'node:fs';
import os from 'node:os';
import { parseFlags } from './lib.mjs';

// /proc/<pid>/stat counts in clock ticks; 100 per second on every Linux this runs on.
const MICROS_PER_TICK = 10_000;

function snapshot(pid) {
  const threads = {};
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    // Fields after the command name, which is parenthesised and may contain spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const written = /^wchar: (\d+)$/m.exec(readFileSync(`/proc/${pid}/task/${tid}/io`, 'utf8'));
    threads[tid] = {
      ticks: Number(fields[11]) + Number(fields[12]), // utime, stime
      written: Number(written?.[1] ?? 0),
    };
  }
  return { pid: String(pid), threads };
}

function report(before, after, requests) {
  const deltas = Object.entries(after.threads)
    .filter(([tid]) => before.threads[tid] !== undefined)
    .map(([tid, now]) => ({
      tid,
      micros: (now.ticks - before.threads[tid].ticks) * MICROS_PER_TICK,
      written: now.written - before.threads[tid].written,
    }));
  const main = deltas.find((thread) => thread.tid === after.pid);
  const others = deltas.filter((thread) => thread.tid !== after.pid);
  const checkpointer = others.reduce(
    (most, thread) => (most === undefined || thread.written > most.written ? thread : most),
    undefined,
  );
  const perRequest = (micros) => (requests === 0 ? 0 : micros / requests).toFixed(0);
  const all = deltas.reduce((sum, thread) => sum + thread.micros, 0);
  const rest = all - (main?.micros ?? 0) - (checkpointer?.micros ?? 0);
  console.log(
    `on-CPU time from /proc, µs per request: process ${perRequest(all)}, main thread ` +
      `${perRequest(main?.micros ?? 0)}, WAL checkpoint thread ${perRequest(checkpointer?.micros ?? 0)} ` +
      `(wrote ${(requests === 0 ? 0 : (checkpointer?.written ?? 0) / requests / 1024).toFixed(1)} KiB ` +
      `per request), other threads (GC, libuv) ${perRequest(rest)}`,
  );
}

const [command] = process.argv.slice(2, 3);
const flags = parseFlags(process.argv.slice(3));
if (os.platform() !== 'linux') {
  if (command === 'snapshot') console.log('{"pid":"0","threads":{}}');
} else if (command === 'snapshot') {
  console.log(JSON.stringify(snapshot(flags.pid)));
} else if (command === 'report') {
  const read = (file) => JSON.parse(readFileSync(file, 'utf8'));
  report(read(flags.before), read(flags.after), Number(flags.requests));
} else {
  throw new Error(
    'usage: thread-cpu.mjs snapshot --pid PID | report --before F --after F --requests N',
  );
}
