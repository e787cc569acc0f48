import type { BillLineItem, OwnerRequestList, OwnerRequestSummary } from '@tollgate/protocol';
import { useState, type FormEvent } from 'react';
import { api, queryText, requestFile } from '../api.js';
import { DownloadLink } from '../components/DownloadLink.js';
import { KeyLabel } from '../components/KeyLabel.js';
import { LineItemName } from '../components/LineItemName.js';
import { PricingRule } from '../components/PricingRule.js';
import { useI18n, type MessageKey } from '../i18n.js';
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
  'resolved',
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
                {t(`record.status.${status}`)}
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

/**
 * A bill's line items (docs/billing.md, "Line items"): what was counted, how many, at what price,
 * for how much; their amounts add up to the bill.
 */
function LineItems({ items }: { items: readonly BillLineItem[] }) {
  const { t } = useI18n();
  return (
    <div className="table-wrap">
      <table data-line-items>
        <caption>{t('tasks.lineItems')}</caption>
        <thead>
          <tr>
            <th scope="col">{t('tasks.lineItem')}</th>
            <th scope="col">{t('tasks.quantity')}</th>
            <th scope="col">{t('tasks.unitPrice')}</th>
            <th scope="col">{t('tasks.amount')}</th>
          </tr>
        </thead>
        <tbody>
          {items.map((item) => (
            <tr key={item.item}>
              <td>
                <LineItemName name={item.item} />
              </td>
              <td className="number">{item.units}</td>
              <td className="number">
                {'price_per_million' in item ? (
                  <>
                    <Yuan micro={item.price_per_million} /> {t('requests.perMillion')}
                  </>
                ) : (
                  <>
                    <Yuan micro={item.unit_price} /> {t('requests.perRequest')}
                  </>
                )}
              </td>
              <td className="number">
                <Yuan micro={item.amount} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The usage counts the record names (`prompt_tokens`…), each in the viewer's language. */
const USAGE_NAMES = new Set([
  'prompt_tokens',
  'completion_tokens',
  'total_tokens',
  'cached_tokens',
  'reasoning_tokens',
  'cache_write_tokens',
  'cache_write_1h_tokens',
]);

function UsageCounts({ usage }: { usage: Record<string, number> }) {
  const { t } = useI18n();
  return (
    <>
      {Object.entries(usage).map(([name, count], index) => (
        <span key={name} data-usage={name}>
          {index > 0 && ', '}
          {USAGE_NAMES.has(name) ? t(`usage.${name}` as MessageKey) : <code>{name}</code>}: {count}
        </span>
      ))}
    </>
  );
}

/** One record; opened, its detail: idempotency key, path, usage, the bill, its rule and items. */
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
        <td data-status={row.status}>{t(`record.status.${row.status}`)}</td>
        <td className="number">{row.bill === null ? '—' : <Yuan micro={row.bill.amount} />}</td>
        <td>
          <KeyLabel keyId={row.key_id} name={row.key_name} hint={row.key_hint} />
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
              <dd>{row.usage === null ? '—' : <UsageCounts usage={row.usage} />}</dd>
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
                  <dd data-pricing-rule>
                    {row.bill.pricing_rule === null ? (
                      '—'
                    ) : (
                      <PricingRule
                        rule={row.bill.pricing_rule}
                        hasItems={(row.bill.line_items?.length ?? 0) > 0}
                      />
                    )}
                  </dd>
                </>
              )}
            </dl>
            {row.bill?.line_items != null && row.bill.line_items.length > 0 && (
              <LineItems items={row.bill.line_items} />
            )}
          </td>
        </tr>
      )}
    </>
  );
}
