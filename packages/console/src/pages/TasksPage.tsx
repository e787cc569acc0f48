import type { OwnerTask } from '@tollgate/protocol';
import { useState } from 'react';
import { callerApi, statusOf, taskKindOf } from '../caller-api.js';
import { ConsoleLink } from '../components/ConsoleLink.js';
import { DataTable, type Column } from '../components/DataTable.js';
import { KeyLabel } from '../components/KeyLabel.js';
import { useI18n } from '../i18n.js';
import { When, Yuan } from '../money.js';
import { useLoad } from '../useLoad.js';
import { ErrorLine } from './ErrorLine.js';

/** Every key's tasks of the account, newest first; a filter for those awaiting settlement. */
export function TasksPage({ onError }: { onError: (error: unknown) => void }) {
  const { t } = useI18n();
  const [filter, setFilter] = useState<'all' | 'pending'>('all');
  const tasks = useLoad(
    () => callerApi.tasks(filter === 'pending' ? { billing_state: 'pending' } : {}),
    onError,
    [filter],
  );
  const { error } = tasks;
  const columns: Column<OwnerTask>[] = [
    { id: 'time', header: t('tasks.time'), cell: (task) => <When iso={task.created_at} /> },
    {
      id: 'id',
      header: t('tasks.id'),
      cell: (task) => (
        <ConsoleLink to={`/tasks/${task.id}`}>
          <code>{task.id}</code>
        </ConsoleLink>
      ),
    },
    {
      id: 'kind',
      header: t('tasks.kind'),
      cell: (task) => t(`task.kind.${taskKindOf(task)}`),
      cellAttributes: (task) => ({ 'data-task-kind': taskKindOf(task) }),
    },
    { id: 'model', header: t('tasks.model'), cell: (task) => task.model },
    {
      id: 'status',
      header: t('tasks.status'),
      cell: (task) => t(`state.${statusOf(task)}`),
    },
    {
      id: 'billing',
      header: t('tasks.billingState'),
      cell: (task) => t(`state.${task.billing.state}`),
    },
    {
      id: 'amount',
      header: t('tasks.amount'),
      number: true,
      cell: (task) => <Yuan micro={task.billing.actual_amount ?? task.billing.reserved_amount} />,
    },
    {
      id: 'key',
      header: t('tasks.key'),
      cell: (task) => <KeyLabel keyId={task.key_id} name={task.key_name} hint={task.key_hint} />,
    },
  ];
  return (
    <section>
      <h1>{t('tasks.title')}</h1>
      <ErrorLine error={error} />
      <div className="inline">
        <label>
          {t('tasks.filter')}
          <select
            value={filter}
            onChange={(event) => setFilter(event.target.value as 'all' | 'pending')}
          >
            <option value="all">{t('tasks.filter.all')}</option>
            <option value="pending">{t('tasks.filter.pending')}</option>
          </select>
        </label>
      </div>
      <DataTable
        rows={tasks.value?.data ?? null}
        columns={columns}
        rowKey={(task) => task.id}
        rowAttributes={(task) => ({ 'data-task-id': task.id })}
        empty={t('tasks.none')}
        failed={error !== null}
      />
    </section>
  );
}
