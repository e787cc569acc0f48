import { useState, type FormEvent } from 'react';
import { api, queryText, requestFile } from '../api.js';
import { DownloadLink } from '../components/DownloadLink.js';
import type { OwnerRequestList, OwnerRequestSummary } from '../console-types.js';
import { useI18n } from '../i18n.js';
import { When, Yuan } from '../money.js';
import { useLoad } from '../useLoad.js';
import { ErrorLine } from './ErrorLine.js';

const STATUSES = [
  'processing',
  'succeeded',
  'failed',
  'accepted',
  'awaiting_funds',
  'submission_unknown',
] as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface Filters {
  search: string;
  model: string;
  status: string;
  from: string;
  to: string;
}
const NO_FILTERS: Filters = { search: '', model: '', status: '', from: '', to: '' };

/**
 * The query of the list and of the CSV export: a search is a request id, or an idempotency key
 * (a UUID); dates are the viewer's days, from the start of `from` to the end of `to`.
 */
function requestQuery(filters: Filters): URLSearchParams {
  const query = new URLSearchParams();
  const search = filters.search.trim();
  if (search !== '') query.set(UUID.test(search) ? 'idempotency_key' : 'request_id', search);
  if (filters.model.trim() !== '') query.set('model', filters.model.trim());
  if (filters.status !== '') query.set('status', filters.status);
  if (filters.from !== '')
    query.set('created_after', new Date(`${filters.from}T00:00`).toISOString());
  if (filters.to !== '') {
    const end = new Date(`${filters.to}T00:00`);
    end.setDate(end.getDate() + 1);
    query.set('created_before', end.toISOString());
  }
  return query;
}

/** Every key's records of the account, newest first: search, filters, detail, CSV export. */
export function RequestsPage({ onError }: { onError: (error: unknown) => void }) {
  const { t } = useI18n();
  const [draft, setDraft] = useState<Filters>(NO_FILTERS);
  const [applied, setApplied] = useState<Filters>(NO_FILTERS);
  const [open, setOpen] = useState<string | null>(null);
  // The first page of the applied filters; "load more" appends the next ones to it.
  const first = useLoad(() => api.requests(requestQuery(applied), null), onError, [applied]);
  const [more, setMore] = useState<{ after: OwnerRequestList; pages: OwnerRequestList[] } | null>(
    null,
  );
  const pages =
    first.value === null ? null : [first.value, ...(more?.after === first.value ? more.pages : [])];
  const rows: OwnerRequestSummary[] | null = pages?.flatMap((page) => page.data) ?? null;
  const last = pages?.at(-1);
  const cursor = last?.has_more === true ? last.next_cursor : null;
  const loadMore = (from: string) => {
    const after = first.value;
    if (after === null) return;
    first.setError(null);
    api
      .requests(requestQuery(applied), from)
      .then((page) =>
        setMore((before) => ({
          after,
          pages: [...(before?.after === after ? before.pages : []), page],
        })),
      )
      .catch(first.fail);
  };
  const error = first.error;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    first.setError(null);
    setApplied(draft);
  };
  const field = (name: keyof Filters) => ({
    name: `filter-${name}`,
    value: draft[name],
    onChange: (event: { target: { value: string } }) =>
      setDraft((before) => ({ ...before, [name]: event.target.value })),
  });
  const csvPath = `/requests.csv${queryText(requestQuery(applied))}`;
  return (
    <section>
      <h1>{t('requests.title')}</h1>
      <form className="card filters" onSubmit={submit}>
        <label>
          {t('requests.search')}
          <input {...field('search')} placeholder="req_… / UUID" autoComplete="off" />
        </label>
        <label>
          {t('requests.model')}
          <input {...field('model')} autoComplete="off" />
        </label>
        <label>
          {t('requests.status')}
          <select {...field('status')}>
            <option value="">{t('requests.anyStatus')}</option>
            {STATUSES.map((status) => (
              <option key={status} value={status}>
                {status}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t('requests.from')}
          <input type="date" {...field('from')} />
        </label>
        <label>
          {t('requests.to')}
          <input type="date" {...field('to')} />
        </label>
        <div className="actions">
          <button type="submit">{t('requests.apply')}</button>
          <DownloadLink
            className="button secondary"
            href={`/console/api${csvPath}`}
            fetchFile={() => requestFile('GET', csvPath, 'text/csv')}
            fallbackName="requests.csv"
            onError={first.fail}
          >
            {t('requests.csv')}
          </DownloadLink>
        </div>
      </form>
      <ErrorLine error={error} />
      {rows === null ? (
        error === null && <p>{t('common.loading')}</p>
      ) : rows.length === 0 ? (
        <p>{t('requests.none')}</p>
      ) : (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">{t('requests.time')}</th>
                <th scope="col">{t('requests.id')}</th>
                <th scope="col">{t('requests.model')}</th>
                <th scope="col">{t('requests.status')}</th>
                <th scope="col">{t('requests.amount')}</th>
                <th scope="col">{t('requests.key')}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <RequestRow
                  key={row.id}
                  row={row}
                  open={open === row.id}
                  onToggle={() => setOpen(open === row.id ? null : row.id)}
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {cursor !== null && (
        <button type="button" className="secondary" onClick={() => loadMore(cursor)}>
          {t('requests.more')}
        </button>
      )}
    </section>
  );
}

/** One record; opened, its detail: idempotency key, path, usage, the bill and its rule. */
function RequestRow({
  row,
  open,
  onToggle,
}: {
  row: OwnerRequestSummary;
  open: boolean;
  onToggle: () => void;
}) {
  const { t } = useI18n();
  return (
    <>
      <tr data-request-id={row.id}>
        <td>
          <When iso={row.created_at} />
        </td>
        <td>
          <button
            type="button"
            className="link"
            aria-expanded={open}
            aria-controls={`detail-${row.id}`}
            onClick={onToggle}
          >
            <code>{row.id}</code>
          </button>
        </td>
        <td>{row.model ?? '—'}</td>
        <td>{row.status}</td>
        <td className="number">{row.bill === null ? '—' : <Yuan micro={row.bill.amount} />}</td>
        <td>
          <code>{row.key_id}</code>
        </td>
      </tr>
      {open && (
        <tr id={`detail-${row.id}`} data-request-detail={row.id}>
          <td colSpan={6}>
            <dl className="facts">
              <dt>{t('requests.idempotencyKey')}</dt>
              <dd>
                <code>{row.idempotency_key}</code>
              </dd>
              <dt>{t('requests.call')}</dt>
              <dd>
                <code>
                  {row.method} {row.path}
                </code>
                {row.http_status === null ? '' : ` → ${row.http_status}`}
              </dd>
              <dt>{t('requests.usage')}</dt>
              <dd>
                {row.usage === null
                  ? '—'
                  : Object.entries(row.usage)
                      .map(([name, count]) => `${name}: ${count}`)
                      .join(', ')}
              </dd>
              {row.bill !== null && (
                <>
                  <dt>{t('requests.amount')}</dt>
                  <dd>
                    <Yuan micro={row.bill.amount} />
                  </dd>
                  <dt>{t('tasks.priceVersion')}</dt>
                  <dd>
                    <code>{row.bill.price_version ?? '—'}</code>
                  </dd>
                  <dt>{t('tasks.rule')}</dt>
                  <dd data-pricing-rule>{row.bill.pricing_rule ?? '—'}</dd>
                </>
              )}
            </dl>
          </td>
        </tr>
      )}
    </>
  );
}
