import { useEffect, useState } from 'react';
import { callerApi, type AccountUsage } from '../caller-api.js';
import { useI18n } from '../i18n.js';
import { Yuan } from '../money.js';
import { navigate } from '../router.js';
import { ErrorLine } from './ErrorLine.js';

const DAY_MS = 86_400_000;
const OPEN_STATUSES = new Set(['queued', 'running', 'submission_unknown']);

function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/**
 * The overview's spend (UTC days, as `/v1/account/usage` counts them): today, this month, the
 * last 30 days per day and model, and how many tasks are open (running, or awaiting settlement).
 */
export function OverviewSpend({ onError }: { onError: (error: unknown) => void }) {
  const { t } = useI18n();
  const [usage, setUsage] = useState<AccountUsage | null>(null);
  const [monthTotal, setMonthTotal] = useState<number | null>(null);
  const [openTasks, setOpenTasks] = useState<number | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    const now = Date.now();
    const today = utcDay(now);
    const fail = (failure: unknown) => {
      onError(failure);
      setError(failure);
    };
    callerApi
      .usage(utcDay(now - 29 * DAY_MS), today)
      .then(setUsage)
      .catch(fail);
    callerApi
      .usage(`${today.slice(0, 8)}01`, today)
      .then((month) => setMonthTotal(month.totals.amount))
      .catch(fail);
    callerApi
      .tasks()
      .then((tasks) =>
        setOpenTasks(
          tasks.data.filter(
            (task) => OPEN_STATUSES.has(task.status) || task.billing.state === 'pending',
          ).length,
        ),
      )
      .catch(fail);
  }, [onError]);
  const today = utcDay(Date.now());
  const todayTotal =
    usage === null
      ? null
      : usage.data.filter((row) => row.date === today).reduce((sum, row) => sum + row.amount, 0);
  return (
    <>
      <ErrorLine error={error} />
      <div className="figures">
        <div className="card figure" data-figure="spend-today">
          <h2>{t('spend.today')}</h2>
          <p className="big">{todayTotal === null ? '…' : <Yuan micro={todayTotal} />}</p>
        </div>
        <div className="card figure" data-figure="spend-month">
          <h2>{t('spend.month')}</h2>
          <p className="big">{monthTotal === null ? '…' : <Yuan micro={monthTotal} />}</p>
        </div>
        <div className="card figure" data-figure="open-tasks">
          <h2>{t('spend.openTasks')}</h2>
          <p className="big">
            <a
              href="/console/tasks"
              onClick={(event) => {
                event.preventDefault();
                navigate('/tasks');
              }}
            >
              {openTasks ?? '…'}
            </a>
          </p>
        </div>
      </div>
      {usage !== null && (
        <div className="card">
          <h2>{t('spend.byDay')}</h2>
          {usage.data.length === 0 ? (
            <p>{t('spend.none')}</p>
          ) : (
            <div className="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">{t('spend.date')}</th>
                    <th scope="col">{t('tasks.model')}</th>
                    <th scope="col">{t('spend.requests')}</th>
                    <th scope="col">{t('tasks.amount')}</th>
                  </tr>
                </thead>
                <tbody>
                  {[...usage.data].reverse().map((row) => (
                    <tr key={`${row.date} ${row.model}`}>
                      <td>{row.date}</td>
                      <td>{row.model}</td>
                      <td className="number">{row.requests}</td>
                      <td className="number">
                        <Yuan micro={row.amount} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </div>
      )}
    </>
  );
}
