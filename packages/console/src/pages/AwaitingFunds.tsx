import type { OwnerRequestSummary, OwnerTask } from '@tollgate/protocol';
import { useState } from 'react';
import { ApiFailure } from '../api.js';
import { callerApi, newIdempotencyKey } from '../caller-api.js';
import { DataTable, type Column } from '../components/DataTable.js';
import { useI18n } from '../i18n.js';
import { When, Yuan } from '../money.js';
import { useLoad } from '../useLoad.js';
import { ErrorLine } from './ErrorLine.js';

type Waiting =
  | { kind: 'record'; id: string; amount: number; created_at: string; record: OwnerRequestSummary }
  | { kind: 'task'; id: string; amount: number; created_at: string; task: OwnerTask };

/** Records `awaiting_funds` and tasks awaiting settlement, as one list, newest first. */
async function readWaiting(): Promise<Waiting[]> {
  const [records, tasks] = await Promise.all([
    callerApi.awaitingRecords(),
    callerApi.tasks({ billing_state: 'pending' }),
  ]);
  const waiting: Waiting[] = [
    ...records.data.map((record) => ({
      kind: 'record' as const,
      id: record.id,
      amount: record.bill?.amount ?? 0,
      created_at: record.created_at,
      record,
    })),
    ...tasks.data.map((task) => ({
      kind: 'task' as const,
      id: task.id,
      amount: task.billing.actual_amount ?? 0,
      created_at: task.created_at,
      task,
    })),
  ];
  return waiting.sort((a, b) => b.created_at.localeCompare(a.created_at));
}

/**
 * What waits for funds (spec 1.4): records `awaiting_funds` and tasks awaiting settlement, each
 * with a button that settles the original as it is — the record's empty-body settle, the task's
 * exact settle body — never a new request. Each row keeps one idempotency key, so a retry of
 * the same click settles once. `refresh` changes after a top-up, so the list is read again.
 */
export function AwaitingFunds({
  onError,
  refresh = 0,
}: {
  onError: (error: unknown) => void;
  refresh?: number;
}) {
  const { t } = useI18n();
  // Read again when `refresh` changes (a top-up).
  const waiting = useLoad(readWaiting, onError, [refresh]);
  const { error, setError, fail } = waiting;
  const [settled, setSettled] = useState<ReadonlySet<string>>(new Set());
  const [keys] = useState(() => new Map<string, string>());

  const settle = (row: Waiting) => {
    setError(null);
    const idempotencyKey = keys.get(row.id) ?? newIdempotencyKey();
    keys.set(row.id, idempotencyKey);
    const done =
      row.kind === 'record'
        ? callerApi.settleRecord(row.id, idempotencyKey)
        : callerApi.settleTask(row.task, idempotencyKey);
    done
      .then(() => setSettled((before) => new Set([...before, row.id])))
      .catch((failure: unknown) => {
        // A refusal records nothing: the next click may use a fresh key.
        if (failure instanceof ApiFailure && failure.status < 500) keys.delete(row.id);
        fail(failure);
      });
  };

  const columns: Column<Waiting>[] = [
    { id: 'time', header: t('tasks.time'), cell: (row) => <When iso={row.created_at} /> },
    {
      id: 'kind',
      header: t('tasks.kind'),
      cell: (row) => t(row.kind === 'record' ? 'awaiting.record' : 'awaiting.task'),
    },
    { id: 'id', header: t('tasks.id'), cell: (row) => <code>{row.id}</code> },
    {
      id: 'amount',
      header: t('tasks.amount'),
      number: true,
      cell: (row) => <Yuan micro={row.amount} />,
    },
    {
      id: 'settle',
      header: t('tasks.settle'),
      cell: (row) =>
        settled.has(row.id) ? (
          <span className="success">{t('awaiting.done')}</span>
        ) : (
          <button type="button" onClick={() => settle(row)}>
            {t('awaiting.settle')} <Yuan micro={row.amount} />
          </button>
        ),
    },
  ];

  return (
    <section aria-labelledby="awaiting-title" className="card">
      <h2 id="awaiting-title">{t('awaiting.title')}</h2>
      <ErrorLine error={error} />
      <DataTable
        rows={waiting.value}
        columns={columns}
        rowKey={(row) => row.id}
        rowAttributes={(row) => ({ 'data-awaiting-id': row.id })}
        empty={t('awaiting.none')}
        failed={error !== null}
      />
    </section>
  );
}
