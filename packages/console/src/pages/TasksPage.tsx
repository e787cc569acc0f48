import { useCallback, useEffect, useState } from 'react';
import { callerApi, type OwnerTask } from '../caller-api.js';
import type { CallerMessageKey } from '../caller-messages.js';
import { useI18n } from '../i18n.js';
import { When, Yuan } from '../money.js';
import { navigate } from '../router.js';
import { ErrorLine } from './ErrorLine.js';

/** Every key's tasks of the account, newest first; a filter for those awaiting settlement. */
export function TasksPage({ onError }: { onError: (error: unknown) => void }) {
  const { t } = useI18n();
  const [filter, setFilter] = useState<'all' | 'pending'>('all');
  const [rows, setRows] = useState<OwnerTask[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const load = useCallback(() => {
    callerApi
      .tasks(filter === 'pending' ? { billing_state: 'pending' } : {})
      .then((list) => setRows(list.data))
      .catch((failure: unknown) => {
        onError(failure);
        setError(failure);
      });
  }, [filter, onError]);
  useEffect(load, [load]);
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
      {rows === null ? (
        error === null && <p>{t('common.loading')}</p>
      ) : rows.length === 0 ? (
        <p>{t('tasks.none')}</p>
      ) : (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">{t('tasks.time')}</th>
                <th scope="col">{t('tasks.id')}</th>
                <th scope="col">{t('tasks.kind')}</th>
                <th scope="col">{t('tasks.model')}</th>
                <th scope="col">{t('tasks.status')}</th>
                <th scope="col">{t('tasks.billingState')}</th>
                <th scope="col">{t('tasks.amount')}</th>
                <th scope="col">{t('tasks.key')}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((task) => (
                <tr key={task.id} data-task-id={task.id}>
                  <td>
                    <When iso={task.created_at} />
                  </td>
                  <td>
                    <a
                      href={`/console/tasks/${task.id}`}
                      onClick={(event) => {
                        event.preventDefault();
                        navigate(`/tasks/${task.id}`);
                      }}
                    >
                      <code>{task.id}</code>
                    </a>
                  </td>
                  <td>{task.object.replace('.task', '')}</td>
                  <td>{task.model}</td>
                  <td>{t(`state.${task.status}` as CallerMessageKey)}</td>
                  <td>{t(`state.${task.billing.state}` as CallerMessageKey)}</td>
                  <td className="number">
                    <Yuan micro={task.billing.actual_amount ?? task.billing.reserved_amount} />
                  </td>
                  <td>
                    <code>{task.key_id}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
