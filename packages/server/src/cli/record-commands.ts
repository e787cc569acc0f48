import { ApiError } from '../errors/api-error.js';
import { arg, integerOption, ok, type Command, type CommandGroup } from './command.js';

/** `tollgate requests|tasks|shares|users …`: records, tasks and shares. */
export const RECORD_COMMAND_GROUPS: Readonly<Record<string, CommandGroup>> = {
  requests: {
    show: {
      usage: 'requests show REQUEST_ID',
      args: ['REQUEST_ID'],
      options: [],
      run: async (input) => {
        const requestId = arg(input, 0, 'REQUEST_ID');
        const [{ operatorRecordView }, services] = await Promise.all([
          import('../requests/record-view.js'),
          input.context.services(),
        ]);
        const row = await services.requests.records.byId(requestId);
        if (row === undefined) throw new ApiError('NOT_FOUND', 'no such request');
        return ok(operatorRecordView(row));
      },
    },
    resolve: {
      usage: 'requests resolve REQUEST_ID (--capture MICRO_YUAN | --release) --reason TEXT',
      args: ['REQUEST_ID'],
      options: ['capture', 'release', 'reason'],
      run: async (input) => {
        const { values } = input;
        const requestId = arg(input, 0, 'REQUEST_ID');
        const services = await input.context.services();
        return ok(
          await services.settlements.resolve(requestId, {
            action:
              values.release === true
                ? 'release'
                : values.capture !== undefined
                  ? 'capture'
                  : undefined,
            amount: integerOption(values.capture),
            reason: values.reason,
          }),
        );
      },
    },
    flagged: {
      usage: 'requests flagged [--all]',
      note: 'usage beyond the cap, not yet reviewed (--all: also reviewed)',
      args: [],
      options: ['all'],
      run: async ({ context, values }) => {
        const services = await context.services();
        return ok({
          object: 'list',
          data: await services.usageReviews.listFlagged({ includeReviewed: values.all === true }),
        });
      },
    },
    'review-usage': {
      usage: 'requests review-usage REQUEST_ID --reason TEXT',
      args: ['REQUEST_ID'],
      options: ['reason'],
      run: async (input) => {
        const requestId = arg(input, 0, 'REQUEST_ID');
        const services = await input.context.services();
        return ok(await services.usageReviews.review(requestId, { reason: input.values.reason }));
      },
    },
  },
  tasks: {
    list: {
      usage: 'tasks list [--status S] [--account ACCOUNT_ID] [--kind image|video|h3]',
      args: [],
      options: ['status', 'account', 'kind'],
      run: async ({ context, values }) =>
        ok(
          await (
            await context.services()
          ).taskOperations.list({
            status: values.status,
            accountId: values.account,
            kind: values.kind,
          }),
        ),
    },
    show: {
      usage: 'tasks show TASK_ID',
      args: ['TASK_ID'],
      options: [],
      run: async (input) => {
        const taskId = arg(input, 0, 'TASK_ID');
        return ok(await (await input.context.services()).taskOperations.show(taskId));
      },
    },
    resolve: {
      usage: 'tasks resolve TASK_ID (--release | --attach UPSTREAM_TASK_ID) --reason TEXT',
      args: ['TASK_ID'],
      options: ['release', 'attach', 'reason'],
      run: async (input) => {
        const { values } = input;
        const taskId = arg(input, 0, 'TASK_ID');
        const services = await input.context.services();
        return ok(
          await services.taskOperations.resolve(taskId, {
            action:
              values.release === true
                ? 'release'
                : values.attach !== undefined
                  ? 'attach'
                  : undefined,
            upstream_task_id: values.attach,
            reason: values.reason,
          }),
        );
      },
    },
  },
  shares: {
    list: {
      usage: 'shares list [--state pending_review|approved|rejected|revoked]',
      note: 'oldest first (the review queue)',
      args: [],
      options: ['state'],
      run: async ({ context, values }) => {
        const [{ shareServiceOf }, services] = await Promise.all([
          import('../shares/share-service.js'),
          context.services(),
        ]);
        return ok(await shareServiceOf(services).listForReview({ state: values.state }));
      },
    },
    show: {
      usage: 'shares show SHARE_ID',
      note: 'with its journal (who decided what, and why)',
      args: ['SHARE_ID'],
      options: [],
      run: async (input) => {
        const shareId = arg(input, 0, 'SHARE_ID');
        const [{ shareServiceOf }, services] = await Promise.all([
          import('../shares/share-service.js'),
          input.context.services(),
        ]);
        return ok(await shareServiceOf(services).show(shareId));
      },
    },
    approve: shareDecision('approve', '[--reason TEXT]'),
    reject: shareDecision('reject', '--reason TEXT'),
    revoke: shareDecision('revoke', '--reason TEXT'),
  },
};

function shareDecision(decision: 'approve' | 'reject' | 'revoke', reasonUsage: string): Command {
  return {
    usage: `shares ${decision} SHARE_ID ${reasonUsage}`,
    args: ['SHARE_ID'],
    options: ['reason'],
    run: async (input) => {
      const shareId = arg(input, 0, 'SHARE_ID');
      const [{ shareServiceOf }, services] = await Promise.all([
        import('../shares/share-service.js'),
        input.context.services(),
      ]);
      const shares = shareServiceOf(services);
      const reason = { reason: input.values.reason };
      if (decision === 'approve') return ok(await shares.approve(shareId, reason));
      if (decision === 'reject') return ok(await shares.reject(shareId, reason));
      return ok(await shares.revoke(shareId, reason));
    },
  };
}
