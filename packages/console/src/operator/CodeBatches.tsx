import type { RedemptionBatch, RedemptionBatchList } from '@tollgate/protocol';
import { useState } from 'react';
import { DataTable, type Column } from '../components/DataTable.js';
import { useI18n } from '../i18n.js';
import { When, Yuan } from '../money.js';
import { ErrorLine } from '../pages/ErrorLine.js';
import { useLoad } from '../useLoad.js';
import { dashboardApi } from './dashboard-api.js';

/**
 * The redemption code batches (`GET /console/api/admin/code-batches`, docs/console.md
 * "Redemption codes"), newest first: each with how many codes were redeemed, voided or are still
 * unredeemed, and a button that voids the unredeemed ones after a confirmation. `version`
 * changes when the page made a new batch: the list is read again.
 */
export function CodeBatches({
  onError,
  version,
}: {
  onError: (error: unknown) => void;
  version: number;
}) {
  const { t } = useI18n();
  const first = useLoad(() => dashboardApi.codeBatches(null), onError, [version]);
  const [more, setMore] = useState<{
    after: RedemptionBatchList;
    pages: RedemptionBatchList[];
  } | null>(null);
  // A batch as the last void answered it, over what the list read before.
  const [updated, setUpdated] = useState<ReadonlyMap<string, RedemptionBatch>>(new Map());
  const [done, setDone] = useState<string | null>(null);
  const pages =
    first.value === null ? null : [first.value, ...(more?.after === first.value ? more.pages : [])];
  const rows =
    pages?.flatMap((page) => page.data).map((batch) => updated.get(batch.id) ?? batch) ?? null;
  const last = pages?.at(-1);
  const cursor = last?.has_more === true ? last.next_cursor : null;
  const loadMore = (after: string) => {
    const base = first.value;
    if (base === null) return;
    dashboardApi
      .codeBatches(after)
      .then((page) =>
        setMore((before) => ({
          after: base,
          pages: [...(before?.after === base ? before.pages : []), page],
        })),
      )
      .catch(first.fail);
  };
  const voidBatch = (batch: RedemptionBatch) => {
    if (!window.confirm(t('op.batch.confirm').replace('{n}', String(batch.unredeemed)))) return;
    first.setError(null);
    setDone(null);
    dashboardApi
      .voidBatch(batch.id)
      .then((voided) => {
        setUpdated((before) => new Map(before).set(voided.batch.id, voided.batch));
        setDone(t('op.batch.voidedNow').replace('{n}', String(voided.voided_now)));
      })
      .catch(first.fail);
  };
  const now = Date.now();
  const columns: Column<RedemptionBatch>[] = [
    {
      id: 'created',
      header: t('op.batch.created'),
      cell: (batch) => <When iso={batch.created_at} />,
    },
    {
      id: 'each',
      header: t('op.batch.each'),
      number: true,
      cell: (batch) => <Yuan micro={batch.amount} />,
    },
    { id: 'codes', header: t('op.batch.codes'), number: true, cell: (batch) => batch.codes },
    {
      id: 'redeemed',
      header: t('op.batch.redeemed'),
      number: true,
      cell: (batch) => batch.redeemed,
      cellAttributes: (batch) => ({ 'data-redeemed': String(batch.redeemed) }),
    },
    {
      id: 'redeemed-amount',
      header: t('op.batch.redeemedAmount'),
      number: true,
      cell: (batch) => <Yuan micro={batch.redeemed_amount} />,
    },
    {
      id: 'voided',
      header: t('op.batch.voided'),
      number: true,
      cell: (batch) => batch.voided,
      cellAttributes: (batch) => ({ 'data-voided': String(batch.voided) }),
    },
    {
      id: 'unredeemed',
      header: t('op.batch.unredeemed'),
      number: true,
      cell: (batch) => batch.unredeemed,
      cellAttributes: (batch) => ({ 'data-unredeemed': String(batch.unredeemed) }),
    },
    {
      id: 'expires',
      header: t('op.batch.expires'),
      cell: (batch) =>
        batch.expires_at === null ? (
          t('op.batch.never')
        ) : (
          <>
            <When iso={batch.expires_at} />
            {Date.parse(batch.expires_at) <= now && t('op.batch.expired')}
          </>
        ),
    },
    {
      id: 'actions',
      header: t('op.batch.actions'),
      hiddenHeader: true,
      cell: (batch) =>
        batch.unredeemed > 0 && (
          <button type="button" className="danger" onClick={() => voidBatch(batch)}>
            {t('op.batch.void')}
          </button>
        ),
    },
  ];
  return (
    <div className="card" data-code-batches>
      <h2>{t('op.batch.title')}</h2>
      <p className="muted">{t('op.batch.note')}</p>
      <ErrorLine error={first.error} />
      {done !== null && (
        <p role="status" className="success">
          {done}
        </p>
      )}
      <DataTable
        rows={rows}
        columns={columns}
        rowKey={(batch) => batch.id}
        rowAttributes={(batch) => ({ 'data-batch-id': batch.id })}
        empty={t('op.batch.none')}
        failed={first.error !== null}
        label={t('op.batch.table')}
      />
      {cursor !== null && (
        <p>
          <button type="button" className="secondary" onClick={() => loadMore(cursor)}>
            {t('op.batch.more')}
          </button>
        </p>
      )}
    </div>
  );
}
