/**
 * A bounded in-process memory: at most `capacity` keys, the least recently used forgotten
 * first, each key forgotten once its expiry (milliseconds on the simulator's clock) has passed.
 * Memory is O(capacity) whatever callers ask.
 */
export class LruMemory {
  private readonly entries = new Map<string, number>();

  constructor(
    private readonly capacity: number,
    private readonly now: () => number,
  ) {}

  /** True when the key is remembered and unexpired; a hit counts as a use (it moves to the back). */
  has(key: string): boolean {
    const expiresAt = this.entries.get(key);
    if (expiresAt === undefined) return false;
    this.entries.delete(key);
    if (expiresAt <= this.now()) return false;
    this.entries.set(key, expiresAt);
    return true;
  }

  /** Remembers the key for `ttlMs` from now (a longer remaining life is kept). */
  remember(key: string, ttlMs: number): void {
    const expiresAt = Math.max(this.now() + ttlMs, this.entries.get(key) ?? 0);
    this.entries.delete(key);
    this.entries.set(key, expiresAt);
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }
}
