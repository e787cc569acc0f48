import type { NamedOperatorRecord } from '@tollgate/protocol';
import type { FormEvent } from 'react';
import { DataTable, type Column } from '../components/DataTable.js';
import { KeyLabel } from '../components/KeyLabel.js';
import { GatewayText } from '../components/PricingRule.js';
import { useRowTexts } from '../components/RowTexts.js';
import { useI18n } from '../i18n.js';
import { When, Yuan } from '../money.js';
import { ErrorLine } from '../pages/ErrorLine.js';
import { useLoad } from '../useLoad.js';
import { operatorApi } from './operator-api.js';

type OnError = (error: unknown) => void;

/**
 * Usage beyond the cap (docs/usage.md): records whose upstream reported more than the request
 * allowed, billed at the cap and not yet reviewed. An operator marks each reviewed with a note
 * (`POST .../review-usage`: audited, no money moves); it then leaves the list.
 */
export function UsageCapPage({ onError }: { onError: OnError }) {
  const { t } = useI18n();
  const flagged = useLoad(() => operatorApi.flaggedUsage(), onError);
  const notes = useRowTexts();
  const review = (event: FormEvent, record: NamedOperatorRecord) => {
    event.preventDefault();
    operatorApi
      .reviewUsage(record.id, notes.text(record.id).trim())
      .then(() => {
        notes.clear(record.id);
        flagged.reload();
      })
      .catch(flagged.fail);
  };
  const columns: Column<NamedOperatorRecord>[] = [
    { id: 'time', header: t('op.when'), cell: (record) => <When iso={record.created_at} /> },
    { id: 'id', header: t('op.request'), cell: (record) => <code>{record.id}</code> },
    {
      id: 'account',
      header: t('op.account'),
      cell: (record) => (
        <span className="wrap-anywhere" title={record.account_id}>
          {record.account_email ?? record.account_id}
        </span>
      ),
    },
    {
      id: 'key',
      header: t('op.key'),
      cell: (record) => (
        <KeyLabel keyId={record.key_id} name={record.key_name} hint={record.key_hint} />
      ),
    },
    { id: 'model', header: t('op.model'), cell: (record) => record.model ?? '—' },
    {
      id: 'billed',
      header: t('op.billed'),
      number: true,
      cell: (record) => (record.bill === null ? '—' : <Yuan micro={record.bill.amount} />),
    },
    {
      id: 'detail',
      header: t('op.detail'),
      cell: (record) =>
        record.usage_exceeded_cap === null ? (
          '—'
        ) : (
          <GatewayText summary={t('op.upstreamReport')} text={record.usage_exceeded_cap.detail} />
        ),
    },
    {
      id: 'review',
      header: t('op.reviewReason'),
      cell: (record) => (
        <form className="inline" onSubmit={(event) => review(event, record)}>
          {notes.input(record.id, {
            name: 'review',
            label: t('op.reviewReason'),
            maxLength: 1000,
            required: true,
          })}
          <button type="submit">{t('op.markReviewed')}</button>
        </form>
      ),
    },
  ];
  return (
    <section>
      <h1>{t('op.usageCap')}</h1>
      <p>{t('op.usageCapNote')}</p>
      <ErrorLine error={flagged.error} />
      {flagged.value !== null && (
        <DataTable
          rows={flagged.value.data}
          columns={columns}
          rowKey={(record) => record.id}
          rowAttributes={(record) => ({ 'data-flagged-id': record.id })}
          empty={t('op.none')}
          label={t('op.more')}
        />
      )}
    </section>
  );
}
