import type { H3Task, Task } from '@tollgate/protocol';
import type { Kysely } from 'kysely';
import type { AssetStorage } from '../assets/local-storage.js';
import type { AssetMediaType } from '../assets/probe.js';
import type { ActualAmount } from '../billing/actual-amount.js';
import type { ModelPrices } from '../config/schema.js';
import type { ProviderRegistry } from '../providers/registry.js';
import type { UpstreamCaller } from '../providers/upstream-http.js';
import type {
  DeliveryReport,
  ProviderTaskInput,
  TaskProvider,
} from '../providers/task-provider.js';
import type { AssetTable, Database } from '../store/schema.js';
import type { TaskRow } from './task-store.js';

/** What a family may read while it builds an upstream input (the referenced assets' bytes). */
export interface FamilyStepDeps {
  readonly db: Kysely<Database>;
  readonly storage: AssetStorage;
  readonly maxVideoBytes: number;
}

/**
 * A task family (images, videos, H3, ...): everything about a task that depends on its kind.
 * The kernel (this folder) claims, submits, polls, stores outputs, prices, settles and expires
 * tasks of every family alike, and asks the family registered under the row's `kind` for the
 * rest. A family lives in its own folder and is registered in services.ts; the kernel never
 * imports one (test/tasks/kernel-imports.test.ts). docs/tasks.md, "How to add a task family".
 *
 * `Input` is the family's stored input (`tasks.input`), which the family writes at creation and
 * parses back with the same schema (`parseInput`) wherever the kernel reads it.
 */
export interface TaskFamily<Input = unknown> {
  /** The `tasks.kind` of this family's rows. */
  readonly kind: string;
  /** Where its tasks live on the wire (`/v1/videos/{id}`): the settle and content paths hang off it. */
  path(id: string): string;
  /**
   * The stored input, checked against the schema that wrote it. Throws (any error) when it does
   * not match: the kernel then stops the task for an operator (`CorruptTaskRow`), never prices it.
   */
  parseInput(stored: unknown): Input;
  /** The provider that runs this family's tasks on `upstream`. */
  provider(providers: ProviderRegistry, upstream: string, caller: UpstreamCaller): TaskProvider;
  /** What the upstream is sent, built before the task is marked `sending` (a failure: never sent). */
  upstreamInput(deps: FamilyStepDeps, task: TaskRow, input: Input): Promise<ProviderTaskInput>;
  /** What an output file may be: its largest size and its media types (checked by its bytes). */
  outputRules(deps: FamilyStepDeps): {
    readonly maxBytes: number;
    readonly mediaTypes: readonly AssetMediaType[];
  };
  /** The upstream's report cut to what was actually stored (a caller never pays for what it cannot read). */
  deliveredReport(report: DeliveryReport, stored: readonly AssetTable[]): DeliveryReport;
  /** The actual amount of what was delivered, at the task's own price version. */
  priceDelivery(prices: ModelPrices, input: Input, report: DeliveryReport): ActualAmount;
  /** The amount of a failure the upstream billed. */
  priceBilledFailure(prices: ModelPrices, input: Input, report: DeliveryReport): ActualAmount;
  /**
   * The task as its creating key reads it (and, with the operator's fields added, operators):
   * one of the wire shapes of spec 2.6, built on task-view.ts's common parts.
   */
  view(row: TaskRow): Task | H3Task;
  /** Whether an operator may attach an upstream id (a synchronous upstream has none to attach). */
  readonly attachable: boolean;
}

/**
 * A failure that fails the same way on every retry (a bad row, a price version that is gone):
 * the worker stops the task for an operator with this reason instead of retrying it
 * (task-steps.ts `stopForOperator`).
 */
export class TaskNeedsOperator extends Error {
  override readonly name: string = 'TaskNeedsOperator';
}

/**
 * A stored row that fails its schema (input, outputs, line items, or a kind no family reads):
 * the task stops for an operator with this reason; it is never priced or charged on it.
 */
export class CorruptTaskRow extends TaskNeedsOperator {
  override readonly name = 'CorruptTaskRow';
}

/** The families of this instance, by kind. */
export class TaskFamilies {
  private readonly byKind = new Map<string, TaskFamily>();

  constructor(families: readonly TaskFamily<unknown>[] = []) {
    for (const family of families) this.register(family);
  }

  register<Input>(family: TaskFamily<Input>): this {
    if (this.byKind.has(family.kind))
      throw new Error(`task family ${family.kind} registered twice`);
    this.byKind.set(family.kind, family);
    return this;
  }

  /** The family of a kind; a row of an unknown kind is a stored row no family can read. */
  of(kind: string): TaskFamily {
    const family = this.byKind.get(kind);
    if (family === undefined)
      throw new CorruptTaskRow(`no task family is registered for kind ${kind}`);
    return family;
  }

  kinds(): string[] {
    return [...this.byKind.keys()];
  }

  /** The task's stored input, parsed by its family; a mismatch is a `CorruptTaskRow`. */
  inputOf(task: Pick<TaskRow, 'id' | 'kind' | 'input'>): { family: TaskFamily; input: unknown } {
    const family = this.of(task.kind);
    return { family, input: storedInputOf(family, task) };
  }
}

/** A task's stored input parsed by `family`'s schema; a mismatch is a `CorruptTaskRow`. */
export function storedInputOf<Input>(
  family: Pick<TaskFamily<Input>, 'parseInput'>,
  task: Pick<TaskRow, 'id' | 'kind' | 'input'>,
): Input {
  try {
    return family.parseInput(JSON.parse(task.input));
  } catch (error) {
    throw new CorruptTaskRow(
      `task ${task.id}: its stored input does not match the ${task.kind} schema (${describe(error)})`,
    );
  }
}

/** A parse failure in one line: zod's first issue and where, or the error's message. */
export function describe(error: unknown): string {
  const issues = (error as { issues?: { path: PropertyKey[]; message: string }[] }).issues;
  const first = issues?.[0];
  if (first !== undefined)
    return `${first.path.map(String).join('.') || '(root)'}: ${first.message}`.slice(0, 300);
  return (error instanceof Error ? error.message : String(error)).slice(0, 300);
}
