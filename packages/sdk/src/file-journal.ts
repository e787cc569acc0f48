import { mkdir, open, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { JournalEntry, RequestJournal } from './journal.js';

/*
 * Node only (it writes files): imported as `@tollgate/sdk/file-journal`, so the main entry
 * stays free of `node:` modules and runs in browsers too.
 */

/**
 * A journal in a JSON-lines file, for scripts that must resume after a crash: each write
 * appends one line (opened with `O_APPEND`, written whole, closed) and resolves once the
 * operating system has it; with `fsync: true` it also survives a power loss. The latest line
 * of a key wins. Lines appended by another `FileJournal` on the same file (another process)
 * are picked up on the next read. A torn last line (a crash mid-write) is ignored. The file
 * only grows; start a new file to compact it.
 */
export class FileJournal implements RequestJournal {
  private readonly byKey = new Map<string, JournalEntry>();
  /** Bytes of the file already applied to `byKey`. */
  private offset = 0;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly file: string,
    private readonly options: { fsync?: boolean } = {},
  ) {}

  write(entry: JournalEntry): Promise<void> {
    // Writes are serialised so that lines never interleave within this process.
    const done = this.queue.then(() => this.append(entry));
    this.queue = done.catch(() => undefined);
    return done;
  }

  async read(key: string): Promise<JournalEntry | undefined> {
    await this.catchUp();
    return this.byKey.get(key);
  }

  async entries(): Promise<JournalEntry[]> {
    await this.catchUp();
    return [...this.byKey.values()];
  }

  private async append(entry: JournalEntry): Promise<void> {
    await mkdir(path.dirname(this.file), { recursive: true });
    const handle = await open(this.file, 'a+');
    try {
      // A line torn by a crash must not swallow this one: start on a fresh line.
      const { size } = await handle.stat();
      const last = Buffer.alloc(1);
      if (size > 0) await handle.read(last, 0, 1, size - 1);
      const separator = size > 0 && last[0] !== 0x0a ? '\n' : '';
      await handle.write(`${separator}${JSON.stringify(entry)}\n`);
      if (this.options.fsync === true) await handle.datasync();
    } finally {
      await handle.close();
    }
    this.byKey.set(entry.key, entry);
  }

  /** Applies whatever was appended to the file since the last read (by anyone). */
  private async catchUp(): Promise<void> {
    const size = await stat(this.file).then(
      (stats) => stats.size,
      () => 0,
    );
    if (size <= this.offset) return;
    const content = (await readFile(this.file)).subarray(this.offset);
    const end = content.lastIndexOf(0x0a);
    if (end < 0) return;
    for (const line of content.subarray(0, end).toString('utf8').split('\n')) {
      const entry = parseLine(line);
      if (entry !== undefined) this.byKey.set(entry.key, entry);
    }
    this.offset += end + 1;
  }
}

function parseLine(line: string): JournalEntry | undefined {
  if (line.trim() === '') return undefined;
  try {
    const value = JSON.parse(line) as Partial<JournalEntry>;
    return typeof value.key === 'string' && (value.kind === 'request' || value.kind === 'job')
      ? (value as JournalEntry)
      : undefined;
  } catch {
    return undefined; // a torn line
  }
}
