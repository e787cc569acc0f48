import type { UsageRow } from '@tollgate/protocol';
import { lazy, Suspense } from 'react';
import { callerApi, last30Days, utcDay } from '../caller-api.js';
import { ConsoleLink } from '../components/ConsoleLink.js';
import { DataTable, type Column } from '../components/DataTable.js';
import { useI18n } from '../i18n.js';
import { Yuan } from '../money.js';
import { useLoad } from '../useLoad.js';
import { ErrorLine } from './ErrorLine.js';

// Chart.js is loaded with the overview only, as a chunk of its own: no other page pays for it.
const SpendChart = lazy(() =>
  import('../components/SpendChart.js').then((module) => ({ default: module.SpendChart })),
);
const OPEN_STATUSES = new Set(['queued', 'running', 'submission_unknown']);

/**
 * The overview's spend (UTC days, as `/v1/account/usage` counts them): today, this month, the
 * last 30 days per day and model, and how many tasks are open (running, or awaiting settlement).
 */
export function OverviewSpend({ onError }: { onError: (error: unknown) => void }) {
  const { t } = useI18n();
  const { value: usage, error: usageError } = useLoad(() => {
    const { from, to } = last30Days(Date.now());
    return callerApi.usage(from, to);
  }, onError);
  const month = useLoad(() => {
    const today = utcDay(Date.now());
    return callerApi.usage(`${today.slice(0, 8)}01`, today);
  }, onError);
  const tasks = useLoad(() => callerApi.tasks(), onError);
  const error = usageError ?? month.error ?? tasks.error;
  const monthTotal = month.value?.totals.amount ?? null;
  const openTasks =
    tasks.value?.data.filter(
      (task) => OPEN_STATUSES.has(task.status) || task.billing.state === 'pending',
    ).length ?? null;
  const today = utcDay(Date.now());
  const todayTotal =
    usage === null
      ? null
      : usage.data.filter((row) => row.date === today).reduce((sum, row) => sum + row.amount, 0);
  const columns: Column<UsageRow>[] = [
    { id: 'date', header: t('spend.date'), cell: (row) => row.date },
    { id: 'model', header: t('tasks.model'), cell: (row) => row.model },
    { id: 'requests', header: t('spend.requests'), number: true, cell: (row) => row.requests },
    {
      id: 'amount',
      header: t('tasks.amount'),
      number: true,
      cell: (row) => <Yuan micro={row.amount} />,
    },
  ];
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
            <ConsoleLink to="/tasks">{openTasks ?? '…'}</ConsoleLink>
          </p>
        </div>
      </div>
      {usage !== null && (
        <div className="card">
          <h2>{t('spend.byDay')}</h2>
          {usage.data.length > 0 && (
            <Suspense fallback={null}>
              <SpendChart
                usage={usage}
                label={t('spend.chart')}
                requestsLabel={t('spend.requests')}
              />
            </Suspense>
          )}
          <DataTable
            rows={[...usage.data].reverse()}
            columns={columns}
            rowKey={(row) => `${row.date} ${row.model}`}
            empty={t('spend.none')}
            label={t('spend.chartTable')}
          />
        </div>
      )}
    </>
  );
}
