import type { Clock } from '../util/effects.js';

/**
 * A long stream's sign of life. The sweeper takes a `processing` record whose `updated_at` is
 * older than its stale age for one left by a dead instance (maintenance/sweeper.ts); a stream
 * that is still relaying has no total time limit, so while its chunks flow its record's
 * `updated_at` is refreshed, at most once every `everyMs`: one small guarded write
 * (`processing` → `processing`) per interval, however many chunks arrive.
 *
 * `beat` is awaited between chunks: a write per interval is cheap, and awaiting it keeps one in
 * flight at most and none left running when the stream finishes. A failed write is logged and
 * the stream goes on; a refused one (the record is no longer `processing`: the sweeper got there
 * during a stall of this process) stops the beats — the finish then reconciles the record
 * (request-service.ts `finish`).
 */
export class RecordHeartbeat {
  private lastBeat: number;
  private stopped = false;

  constructor(
    private readonly everyMs: number,
    private readonly clock: Clock,
    /** The guarded write; `false` when the record was no longer `processing`. */
    private readonly write: (now: number) => Promise<boolean>,
    private readonly onTrouble: (trouble: 'refused' | 'failed', error?: unknown) => void,
  ) {
    // The claim wrote `updated_at` a moment ago.
    this.lastBeat = clock.now();
  }

  async beat(): Promise<void> {
    if (this.stopped) return;
    const now = this.clock.now();
    if (now - this.lastBeat < this.everyMs) return;
    this.lastBeat = now;
    try {
      if (!(await this.write(now))) {
        this.stopped = true;
        this.onTrouble('refused');
      }
    } catch (error) {
      this.onTrouble('failed', error);
    }
  }
}
