import type { ProviderTaskInput, SubmitResult, TaskProvider } from '../providers/task-provider.js';
import { taskModelOn, type Channel } from '../routing/channels.js';
import type { LeasedTask } from './task-store.js';
import { LostLease, type TaskStepDeps } from './task-step-kit.js';

/**
 * How a submission went. `unsent`: no channel of the model was usable (disabled, cooling down,
 * at its limits), the row is still `pending` and nothing left. Otherwise the row is `sending`
 * on the channel the call was last made on, and `deps` is the step's dependencies with that
 * channel's provider (whatever follows in this step: a synchronous result's download, a
 * look-up).
 */
export type Submission =
  | { readonly kind: 'unsent' }
  | {
      readonly kind: 'answered';
      readonly result: SubmitResult;
      readonly deps: TaskStepDeps;
      readonly task: LeasedTask;
    }
  | {
      readonly kind: 'threw';
      readonly error: unknown;
      readonly deps: TaskStepDeps;
      readonly task: LeasedTask;
    };

/**
 * Submits a queued task on one of its model's channels, chosen like a request's
 * (routing/channel-router.ts: priority, weight, skipping disabled, open-breaker and full
 * channels). Before each call the row moves to `sending` with that channel and upstream, in one
 * guarded write (never sent twice from there, whatever happens). Only a failure with no upstream
 * answer (nothing sent) or a status the upstream's `task_failover_statuses` names moves the
 * submission to the next usable channel not yet tried (routing/failover-rule.ts, purpose
 * `task`: a 503 may come from a proxy that already forwarded it); any other outcome is final. A model no longer configured is submitted
 * where its row says. Throws `LostLease` when the claim was lost before a call.
 */
export async function submitOnChannels(
  deps: TaskStepDeps,
  task: LeasedTask,
  input: ProviderTaskInput,
): Promise<Submission> {
  const routing = deps.channels.routeModel(task.model);
  const planned = task.channel === null ? undefined : deps.channels.channel(task.channel);
  let sentOn: { task: LeasedTask; deps: TaskStepDeps } | undefined;

  const sendOn = async (channel: Channel | undefined): Promise<SubmitResult> => {
    // The provider first: one that cannot be made (its upstream gone from the configuration)
    // fails before `sending` is written, so the task is known never to have left.
    const provider = channel === undefined ? deps.provider : deps.providerOn(channel.upstream);
    const now = deps.effects.clock.now();
    const placed = channel === undefined ? {} : { channel: channel.id, upstream: channel.upstream };
    const marked = await deps.tasks.move(
      deps.db,
      {
        id: task.id,
        now,
        claim: task.claim_token,
        status: { from: 'queued', to: 'queued' },
        submission: { from: sentOn === undefined ? 'pending' : 'sending', to: 'sending' },
      },
      { submitted_at: now, ...placed },
    );
    if (!marked) throw new LostLease(task.id);
    if (sentOn === undefined) deps.metrics.taskSubmissions.inc();
    const onChannel = { ...task, ...placed };
    sentOn = { task: onChannel, deps: channel === undefined ? deps : withProvider(deps, provider) };
    const sent =
      channel === undefined
        ? input
        : { ...input, upstreamModel: taskModelOn(input.upstreamModel, planned, channel) };
    return provider.submit(sent, task.id, deps.signal);
  };

  try {
    const result =
      routing === undefined
        ? await sendOn(undefined)
        : await routing.run(sendOn, { purpose: 'task' });
    if (sentOn === undefined) throw new Error('a submission answered without being sent');
    return { kind: 'answered', result, ...sentOn };
  } catch (error) {
    if (error instanceof LostLease) throw error;
    if (sentOn === undefined) {
      deps.logger.warn({ taskId: task.id, err: error }, 'no channel usable for the task; not sent');
      return { kind: 'unsent' };
    }
    return { kind: 'threw', error, ...sentOn };
  }
}

/**
 * The step's dependencies with `provider` replaced. Copied by property descriptors, so the
 * original's lazy `provider` getter is not run (the upstream the row named may be gone).
 */
function withProvider(deps: TaskStepDeps, provider: TaskProvider): TaskStepDeps {
  const descriptors = Object.getOwnPropertyDescriptors(deps);
  return Object.defineProperties(
    {},
    { ...descriptors, provider: { value: provider, enumerable: true } },
  ) as TaskStepDeps;
}
