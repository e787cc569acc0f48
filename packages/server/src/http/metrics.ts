import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { UnresolvedSummary, UnresolvedTotals } from '../usage/unresolved-queue.js';
import type { ChannelStatus } from '../routing/channel-router.js';

/** Prometheus metrics, one registry per app (no global state, so tests can build many apps). */
export class Metrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'tollgate_http_requests_total',
    help: 'HTTP requests by route, model and status',
    labelNames: ['route', 'model', 'status'] as const,
    registers: [this.registry],
  });
  readonly latency = new Histogram({
    name: 'tollgate_http_request_duration_seconds',
    help: 'Time to answer, by route and model',
    labelNames: ['route', 'model'] as const,
    buckets: [
      0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
    ],
    registers: [this.registry],
  });
  readonly holds = new Counter({
    name: 'tollgate_holds_total',
    help: 'Holds attempted, by outcome (placed, insufficient_funds)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly resolutions = new Counter({
    name: 'tollgate_hold_resolutions_total',
    help: 'How requests with a hold ended: captured, released, awaiting_funds, submission_unknown',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly captured = new Counter({
    name: 'tollgate_captured_micro_yuan_total',
    help: 'Micro-yuan captured from accounts',
    registers: [this.registry],
  });

  readonly usageExceededCap = new Counter({
    name: 'tollgate_usage_exceeded_cap_total',
    help: 'Requests whose upstream reported usage beyond the gateway cap (billed at the cap, flagged for review)',
    registers: [this.registry],
  });

  readonly usageCountedLocally = new Counter({
    name: 'tollgate_usage_counted_locally_total',
    help: 'Streams that finished without the upstream reporting usage, billed on the gateway estimate (flagged for review)',
    registers: [this.registry],
  });

  readonly taskTransitions = new Counter({
    name: 'tollgate_task_transitions_total',
    help: 'Image and video task status changes, by the status reached',
    labelNames: ['to'] as const,
    registers: [this.registry],
  });
  readonly taskSubmissions = new Counter({
    name: 'tollgate_task_submissions_total',
    help: 'Task submissions sent upstream (each task at most once, whatever the instances)',
    registers: [this.registry],
  });
  readonly taskSettlements = new Counter({
    name: 'tollgate_task_settlements_total',
    help: 'Task settle attempts by outcome (settled, insufficient_funds, refused)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly taskLateAnswers = new Counter({
    name: 'tollgate_task_late_answers_total',
    help: 'Upstream answers that came after their claim was lost, by whether their upstream id was kept',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly taskStoppedForOperator = new Counter({
    name: 'tollgate_task_stopped_for_operator_total',
    help: 'Task steps that failed deterministically (a stored row that fails its schema, a price version that is gone) and stopped the task for an operator',
    registers: [this.registry],
  });
  readonly workerLag = new Histogram({
    name: 'tollgate_task_worker_lag_seconds',
    help: 'How late a task was taken by a worker after it became due',
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });

  /**
   * Tasks by status, read from the database when scraped (`countTasks` is set by the services;
   * every instance reports the same shared figures).
   */
  countTasks: (() => Promise<Record<string, number>>) | undefined;
  readonly tasksByStatus = new Gauge({
    name: 'tollgate_tasks',
    help: 'Image and video tasks by status (whole database)',
    labelNames: ['status'] as const,
    registers: [this.registry],
    collect: async () => {
      if (this.countTasks === undefined) return;
      for (const [status, count] of Object.entries(await this.countTasks()))
        this.tasksByStatus.set({ status }, count);
    },
  });

  /**
   * The operator's queue (usage/unresolved-queue.ts), read from the shared database when
   * scraped (set by the services). Like `tollgate_tasks`, every instance reports the same
   * whole-database figures: aggregate with `max`, never `sum`, across instances.
   */
  readUnresolved: (() => Promise<UnresolvedSummary>) | undefined;
  /** The read the three gauges below share within one scrape (they are collected together). */
  private unresolvedRead: Promise<UnresolvedSummary | undefined> | undefined;
  private readUnresolvedOnce(): Promise<UnresolvedSummary | undefined> {
    this.unresolvedRead ??= (this.readUnresolved?.() ?? Promise.resolve(undefined)).finally(() => {
      this.unresolvedRead = undefined;
    });
    return this.unresolvedRead;
  }
  /** Sets one of the queue's gauges per kind from the shared read. */
  private async collectUnresolved(
    gauge: Gauge<'kind'>,
    value: (totals: UnresolvedTotals) => number,
  ): Promise<void> {
    const summary = await this.readUnresolvedOnce();
    if (summary === undefined) return;
    gauge.set({ kind: 'request' }, value(summary.requests));
    gauge.set({ kind: 'task' }, value(summary.tasks));
  }
  readonly submissionUnknownHeld: Gauge<'kind'> = new Gauge({
    name: 'tollgate_submission_unknown_held_microyuan',
    help: 'Micro-yuan held by submission_unknown request records and tasks (whole database)',
    labelNames: ['kind'] as const,
    registers: [this.registry],
    collect: () => this.collectUnresolved(this.submissionUnknownHeld, (totals) => totals.held),
  });
  readonly submissionUnknownCount: Gauge<'kind'> = new Gauge({
    name: 'tollgate_submission_unknown',
    help: 'submission_unknown request records and tasks holding money (whole database)',
    labelNames: ['kind'] as const,
    registers: [this.registry],
    collect: () => this.collectUnresolved(this.submissionUnknownCount, (totals) => totals.count),
  });
  readonly submissionUnknownOldest: Gauge<'kind'> = new Gauge({
    name: 'tollgate_submission_unknown_oldest_age_seconds',
    help: 'Age of the oldest submission_unknown request record or task holding money (0: none)',
    labelNames: ['kind'] as const,
    registers: [this.registry],
    collect: () =>
      this.collectUnresolved(
        this.submissionUnknownOldest,
        (totals) => totals.oldest_age_seconds ?? 0,
      ),
  });

  readonly channelAttempts = new Counter({
    name: 'tollgate_channel_attempts_total',
    help: 'Upstream attempts by channel and outcome (succeeded, not_processed, maybe_processed, refused)',
    labelNames: ['channel', 'outcome'] as const,
    registers: [this.registry],
  });

  /**
   * The event log's backlog (`accounting.event_log`, docs/event-log.md): events not applied yet
   * and the age of the oldest, read from the shared database when scraped (set by the services
   * when the log is on). Whole-database figures like `tollgate_tasks`: aggregate with `max`.
   */
  readEventLog: (() => Promise<{ pending: number; oldestAgeSeconds: number }>) | undefined;
  readonly eventLogPending = new Gauge({
    name: 'tollgate_event_log_pending',
    help: 'Events of the accounting event log not applied to the records yet (whole database)',
    registers: [this.registry],
    collect: async () => {
      const backlog = await this.readEventLog?.();
      if (backlog === undefined) return;
      this.eventLogPending.set(backlog.pending);
      this.eventLogOldest.set(backlog.oldestAgeSeconds);
    },
  });
  readonly eventLogOldest = new Gauge({
    name: 'tollgate_event_log_oldest_seconds',
    help: 'Age of the oldest event of the accounting event log not applied yet (0: none)',
    registers: [this.registry],
  });

  /** The channels' states, read from the router when scraped (set by the services). */
  channelStates: (() => Promise<readonly ChannelStatus[]>) | undefined;
  readonly channelState = new Gauge({
    name: 'tollgate_channel_state',
    help: 'Each channel: 1 for its current state (closed, open, half_open, disabled), 0 otherwise',
    labelNames: ['channel', 'state'] as const,
    registers: [this.registry],
    collect: async () => {
      if (this.channelStates === undefined) return;
      for (const channel of await this.channelStates()) {
        const current = channel.disabled ? 'disabled' : channel.breaker;
        for (const state of ['closed', 'open', 'half_open', 'disabled'])
          this.channelState.set({ channel: channel.id, state }, state === current ? 1 : 0);
      }
    },
  });

  constructor(collectProcessMetrics: boolean) {
    if (collectProcessMetrics) collectDefaultMetrics({ register: this.registry });
  }
}
