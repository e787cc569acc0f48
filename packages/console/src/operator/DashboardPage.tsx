import type {
  AccountUsage,
  DashboardAccount,
  DashboardChannel,
  DashboardDay,
  DashboardFigures,
  DashboardModel,
  OperatorDashboard,
} from '@tollgate/protocol';
import { lazy, Suspense, useState, type FormEvent, type ReactNode } from 'react';
import { last30Days } from '../caller-api.js';
import { ConsoleLink } from '../components/ConsoleLink.js';
import { DataTable, type Column } from '../components/DataTable.js';
import { Field } from '../components/Field.js';
import { useI18n, type MessageKey } from '../i18n.js';
import { When, Yuan } from '../money.js';
import { ErrorLine } from '../pages/ErrorLine.js';
import { useLoad } from '../useLoad.js';
import { dashboardApi } from './dashboard-api.js';

// Chart.js is loaded with the pages that draw it only, as a chunk of its own (as the overview).
const SpendChart = lazy(() =>
  import('../components/SpendChart.js').then((module) => ({ default: module.SpendChart })),
);

type OnError = (error: unknown) => void;

/**
 * The operator's dashboard (`GET /console/api/admin/dashboard`, docs/console.md "Dashboard"): a
 * period of UTC days (the last 30 by default); revenue, channel cost and margin in all, per day
 * (the spend chart, stacked by model, and its table), for the top accounts, per model and per
 * channel; the money held now and the resolution queue.
 */
export function DashboardPage({ onError }: { onError: OnError }) {
  const { t } = useI18n();
  const [draft, setDraft] = useState(() => last30Days(Date.now()));
  const [period, setPeriod] = useState(draft);
  const dashboard = useLoad(() => dashboardApi.dashboard(period.from, period.to), onError, [
    period,
  ]);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    dashboard.setError(null);
    setPeriod({ ...draft });
  };
  const shown = dashboard.value;
  return (
    <section>
      <h1>{t('op.dash.title')}</h1>
      <form className="card filters" onSubmit={submit}>
        <Field
          label={t('op.dash.from')}
          name="dashboard-from"
          type="date"
          required
          value={draft.from}
          onValue={(from) => setDraft((given) => ({ ...given, from }))}
        />
        <Field
          label={t('op.dash.to')}
          name="dashboard-to"
          type="date"
          required
          value={draft.to}
          onValue={(to) => setDraft((given) => ({ ...given, to }))}
        />
        <div className="actions">
          <button type="submit">{t('op.dash.show')}</button>
        </div>
      </form>
      <p className="muted">{t('op.dash.note')}</p>
      <ErrorLine error={dashboard.error} />
      {shown === null ? (
        dashboard.error === null && <p>{t('common.loading')}</p>
      ) : (
        <DashboardFiguresView dashboard={shown} />
      )}
    </section>
  );
}

function DashboardFiguresView({ dashboard }: { dashboard: OperatorDashboard }) {
  const { t } = useI18n();
  const { totals } = dashboard;
  // The chart takes the shape of an account's usage: days and models, with their amounts.
  const usage: AccountUsage = {
    object: 'account.usage',
    account_id: '',
    currency: dashboard.currency,
    from: dashboard.from,
    to: dashboard.to,
    data: dashboard.by_day_model,
    totals: { requests: totals.requests, amount: totals.revenue, by_model: [] },
  };
  return (
    <div data-dashboard={`${dashboard.from}/${dashboard.to}`}>
      <dl className="figures operator-figures">
        <Figure label={t('op.dash.revenue')} name="revenue">
          <Yuan micro={totals.revenue} />
        </Figure>
        <Figure label={t('op.dash.channelCost')} name="channel-cost">
          <MaybeYuan micro={totals.channel_cost} none="op.dash.unknownCost" />
        </Figure>
        <Figure label={t('op.dash.margin')} name="margin">
          <MaybeYuan micro={totals.margin} none="op.dash.unknownCost" />
        </Figure>
        <Figure label={t('op.dash.charges')} name="charges">
          {totals.requests.toLocaleString()}
        </Figure>
        <Figure label={t('op.dash.held')} name="held">
          <Yuan micro={dashboard.open_holds.amount} />
          <small className="muted figure-note">
            {t('op.dash.holdingAccounts')}: {dashboard.open_holds.accounts}
          </small>
        </Figure>
        <Figure label={t('op.dash.unresolved')} name="unresolved">
          <ConsoleLink to="/admin/resolve">{dashboard.unresolved.count}</ConsoleLink>
          <small className="muted figure-note">
            {t('op.dash.unresolvedHeld')} <Yuan micro={dashboard.unresolved.held} />
            {dashboard.unresolved.oldest_created_at !== null && (
              <>
                {' · '}
                {t('op.dash.oldest')} <When iso={dashboard.unresolved.oldest_created_at} />
              </>
            )}
          </small>
        </Figure>
      </dl>
      {totals.revenue_without_cost > 0 && totals.channel_cost !== null && (
        <p className="muted" data-without-cost>
          {t('op.dash.withoutCost')}: <Yuan micro={totals.revenue_without_cost} />
        </p>
      )}

      <div className="card">
        <h2>{t('op.dash.byDay')}</h2>
        {dashboard.by_day_model.length > 0 && (
          <Suspense fallback={null}>
            <SpendChart
              usage={usage}
              label={t('op.dash.chart')}
              requestsLabel={t('op.dash.charges')}
            />
          </Suspense>
        )}
        <FiguresTable
          rows={[...dashboard.days].reverse()}
          first={{ id: 'day', header: t('op.dash.day'), cell: (row: DashboardDay) => row.date }}
          rowKey={(row) => row.date}
          name="day"
          label={t('op.dash.byDay')}
        />
      </div>

      <div className="card">
        <h2>{t('op.dash.topAccounts')}</h2>
        <p className="muted" data-accounts-charged={dashboard.accounts_charged}>
          {t('op.dash.accountsCharged')}
          {dashboard.accounts_charged}
        </p>
        <FiguresTable
          rows={dashboard.top_accounts}
          first={{
            id: 'account',
            header: t('op.dash.account'),
            cell: (row: DashboardAccount) => (
              <span className="wrap-anywhere">
                <ConsoleLink to={`/admin/accounts/${encodeURIComponent(row.account_id)}`}>
                  {row.email}
                </ConsoleLink>
              </span>
            ),
          }}
          rowKey={(row) => row.account_id}
          name="account"
          label={t('op.dash.topAccounts')}
        />
      </div>

      <div className="card">
        <h2>{t('op.dash.byModel')}</h2>
        <FiguresTable
          rows={dashboard.models}
          first={{
            id: 'model',
            header: t('op.dash.model'),
            cell: (row: DashboardModel) => row.model,
          }}
          rowKey={(row) => row.model}
          name="model"
          label={t('op.dash.byModel')}
        />
      </div>

      <div className="card">
        <h2>{t('op.dash.byChannel')}</h2>
        <FiguresTable
          rows={dashboard.channels}
          first={{
            id: 'channel',
            header: t('op.dash.channel'),
            cell: (row: DashboardChannel) =>
              row.channel === null ? t('op.dash.noChannel') : <code>{row.channel}</code>,
          }}
          rowKey={(row) => row.channel ?? ''}
          name="channel"
          label={t('op.dash.byChannel')}
          noCost={(row) => (row.cost_configured ? 'op.dash.unknownCost' : 'op.dash.noCost')}
        />
      </div>
    </div>
  );
}

/**
 * A table of figures: its first column (the day, account, model or channel), then charges,
 * revenue, channel cost, margin and the revenue without a cost. `noCost` says why a row has no
 * cost (a channel without `cost` configured, or none recorded).
 */
function FiguresTable<Row extends DashboardFigures>({
  rows,
  first,
  rowKey,
  name,
  label,
  noCost = () => 'op.dash.unknownCost',
}: {
  rows: readonly Row[];
  first: Column<Row>;
  rowKey: (row: Row) => string;
  name: string;
  /** The table's name (its scrolling region's). */
  label: string;
  noCost?: (row: Row) => MessageKey;
}) {
  const { t } = useI18n();
  const columns: Column<Row>[] = [
    first,
    {
      id: 'requests',
      header: t('op.dash.charges'),
      number: true,
      cell: (row) => row.requests.toLocaleString(),
    },
    {
      id: 'revenue',
      header: t('op.dash.revenue'),
      number: true,
      cell: (row) => <Yuan micro={row.revenue} />,
    },
    {
      id: 'cost',
      header: t('op.dash.channelCost'),
      number: true,
      cell: (row) => <MaybeYuan micro={row.channel_cost} none={noCost(row)} />,
    },
    {
      id: 'margin',
      header: t('op.dash.margin'),
      number: true,
      cell: (row) => <MaybeYuan micro={row.margin} none={noCost(row)} />,
    },
    {
      id: 'without-cost',
      header: t('op.dash.withoutCost'),
      number: true,
      cell: (row) => <Yuan micro={row.revenue_without_cost} />,
    },
  ];
  return (
    <DataTable
      rows={rows}
      columns={columns}
      rowKey={rowKey}
      rowAttributes={(row) => ({ [`data-dashboard-${name}`]: rowKey(row) })}
      empty={t('op.dash.none')}
      label={label}
    />
  );
}

/** An amount, or why there is none (no channel cost configured or recorded). */
function MaybeYuan({ micro, none }: { micro: number | null; none: MessageKey }) {
  const { t } = useI18n();
  if (micro === null) return <span className="muted">{t(none)}</span>;
  return <Yuan micro={micro} />;
}

function Figure({ label, name, children }: { label: string; name: string; children: ReactNode }) {
  return (
    <div className="card" data-figure={name}>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}
