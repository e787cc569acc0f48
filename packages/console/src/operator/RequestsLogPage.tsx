import type { OperatorRequestLog, OperatorRequestLogRow } from '@tollgate/protocol';
import { useState, type FormEvent } from 'react';
import { DataTable, type Column } from '../components/DataTable.js';
import { useI18n, type MessageKey } from '../i18n.js';
import { When, Yuan } from '../money.js';
import { ErrorLine } from '../pages/ErrorLine.js';
import { useLoad } from '../useLoad.js';
import { usePagedList } from '../usePagedList.js';
import { AccountPicker } from './AccountPicker.js';
import { dashboardApi, type RequestLogFilters } from './dashboard-api.js';

type OnError = (error: unknown) => void;

/** Every status a record may have (server: requests/record-states.ts), each with its words. */
const STATUSES = [
  'processing',
  'succeeded',
  'failed',
  'accepted',
  'awaiting_funds',
  'submission_unknown',
  'resolved',
] as const;

/** The form: pickers (ids chosen from lists, never typed) and the viewer's days. */
interface Draft {
  accountId: string;
  keyId: string;
  model: string;
  status: string;
  from: string;
  to: string;
}
const NO_FILTERS: Draft = { accountId: '', keyId: '', model: '', status: '', from: '', to: '' };

/** The viewer's days as the instants the server reads: `from` at 00:00, `to` the day after. */
function filtersOf(draft: Draft): RequestLogFilters {
  const to = draft.to === '' ? null : new Date(`${draft.to}T00:00`);
  to?.setDate(to.getDate() + 1);
  return {
    account_id: draft.accountId,
    key_id: draft.keyId,
    model: draft.model,
    status: draft.status,
    from: draft.from === '' ? '' : new Date(`${draft.from}T00:00`).toISOString(),
    to: to === null ? '' : to.toISOString(),
  };
}

const statusKey = (status: string) => `op.status.${status}` as MessageKey;

/**
 * The operator's request log (`GET /console/api/admin/requests`, docs/console.md "Request log"):
 * every account's records newest first, filtered by an account found by its email, one of its
 * keys, a model, a status and a period; "load more" pages on with the period the first page read,
 * so that pages neither repeat nor skip a record.
 */
export function RequestsLogPage({ onError }: { onError: OnError }) {
  const { t } = useI18n();
  const { draft, setDraft, submit, reset, first, rows, cursor, loadMore } = usePagedList({
    initial: NO_FILTERS,
    filtersOf,
    // The period the first page read: a default period ("the last 30 days") must not move.
    read: (filters, pageCursor, firstPage: OperatorRequestLog | null) =>
      dashboardApi.requests(
        firstPage === null ? filters : { ...filters, from: firstPage.from, to: firstPage.to },
        pageCursor,
      ),
    onError,
  });
  const columns: Column<OperatorRequestLogRow>[] = [
    { id: 'time', header: t('op.log.time'), cell: (row) => <When iso={row.created_at} /> },
    {
      id: 'account',
      header: t('op.log.account'),
      cell: (row) => <span className="wrap-anywhere">{row.account_email ?? row.account_id}</span>,
    },
    {
      id: 'key',
      header: t('op.log.key'),
      cell: (row) => (
        <span className="wrap-anywhere" title={row.key_id}>
          {row.key_name ?? row.key_hint ?? t('op.log.unnamed')}
        </span>
      ),
    },
    { id: 'model', header: t('op.log.model'), cell: (row) => row.model ?? '—' },
    {
      id: 'status',
      header: t('op.log.status'),
      cell: (row) => t(statusKey(row.status)),
      cellAttributes: (row) => ({ 'data-status': row.status }),
    },
    {
      id: 'amount',
      header: t('op.log.amount'),
      number: true,
      cell: (row) =>
        row.amount === null ? (
          '—'
        ) : (
          <>
            <Yuan micro={row.amount} />
            {!row.captured && (
              <small className="muted figure-note">{t('op.log.notCaptured')}</small>
            )}
          </>
        ),
    },
    { id: 'record', header: t('op.log.record'), cell: (row) => <code>{row.id}</code> },
  ];
  return (
    <section>
      <h1>{t('op.log.title')}</h1>
      <p className="muted">{t('op.log.note')}</p>
      <LogFilters
        draft={draft}
        onDraft={setDraft}
        onSubmit={submit}
        onClear={reset}
        onError={first.fail}
      />
      <ErrorLine error={first.error} />
      {first.value !== null && (
        <p className="muted" data-log-period>
          {t('op.log.period')}
          <When iso={first.value.from} /> – <When iso={first.value.to} />
        </p>
      )}
      <DataTable
        rows={rows}
        columns={columns}
        rowKey={(row) => row.id}
        rowAttributes={(row) => ({ 'data-log-request': row.id })}
        empty={t('op.log.none')}
        failed={first.error !== null}
        label={t('op.dash.table')}
      />
      {cursor !== null && (
        <p>
          <button type="button" className="secondary" onClick={() => loadMore(cursor)}>
            {t('op.log.more')}
          </button>
        </p>
      )}
    </section>
  );
}

/**
 * The filters: an account found by a part of its email (a list of the matches to pick from),
 * then one of its keys; a configured model; a status; the viewer's days.
 */
function LogFilters({
  draft,
  onDraft,
  onSubmit,
  onClear,
  onError,
}: {
  draft: Draft;
  onDraft: (change: (before: Draft) => Draft) => void;
  onSubmit: (event: FormEvent) => void;
  onClear: () => void;
  onError: OnError;
}) {
  const { t } = useI18n();
  // Cleared with the filters: a new picker, its search empty (`key`).
  const [pickerKey, setPickerKey] = useState(0);
  const models = useLoad(() => dashboardApi.models(), onError);
  const keys = useLoad(
    () =>
      draft.accountId === ''
        ? Promise.resolve({ object: 'list' as const, data: [] })
        : dashboardApi.keys(draft.accountId),
    onError,
    [draft.accountId],
  );
  const set = (name: keyof Draft) => (event: { target: { value: string } }) => {
    const value = event.target.value;
    onDraft((before) => ({ ...before, [name]: value }));
  };
  return (
    <form className="card filters" onSubmit={onSubmit}>
      <AccountPicker
        key={pickerKey}
        name="log-account"
        label={t('op.log.account')}
        noneLabel={t('op.log.anyAccount')}
        value={draft.accountId}
        onChange={(accountId) => onDraft((before) => ({ ...before, accountId, keyId: '' }))}
        onError={onError}
      />
      <label>
        {t('op.log.key')}
        <select
          name="log-key"
          value={draft.keyId}
          disabled={draft.accountId === ''}
          onChange={set('keyId')}
        >
          <option value="">{t('op.log.anyKey')}</option>
          {(keys.value?.data ?? []).map((key) => (
            <option key={key.id} value={key.id}>
              {key.name ?? key.hint}
            </option>
          ))}
        </select>
      </label>
      <label>
        {t('op.log.model')}
        <select name="log-model" value={draft.model} onChange={set('model')}>
          <option value="">{t('op.log.anyModel')}</option>
          {(models.value?.data ?? []).map((model) => (
            <option key={model.id} value={model.id}>
              {model.id}
            </option>
          ))}
        </select>
      </label>
      <label>
        {t('op.log.status')}
        <select name="log-status" value={draft.status} onChange={set('status')}>
          <option value="">{t('op.log.anyStatus')}</option>
          {STATUSES.map((status) => (
            <option key={status} value={status}>
              {t(statusKey(status))}
            </option>
          ))}
        </select>
      </label>
      <label>
        {t('op.log.from')}
        <input name="log-from" type="date" value={draft.from} onChange={set('from')} />
      </label>
      <label>
        {t('op.log.to')}
        <input name="log-to" type="date" value={draft.to} onChange={set('to')} />
      </label>
      <div className="actions">
        <button type="submit">{t('op.log.apply')}</button>
        <button
          type="button"
          className="secondary"
          onClick={() => {
            setPickerKey((count) => count + 1);
            onClear();
          }}
        >
          {t('op.log.clear')}
        </button>
      </div>
    </form>
  );
}
