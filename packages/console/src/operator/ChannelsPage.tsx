import type { Channel } from '@tollgate/protocol';
import { DataTable, type Column } from '../components/DataTable.js';
import { useRowTexts } from '../components/RowTexts.js';
import { useI18n } from '../i18n.js';
import { When } from '../money.js';
import { ErrorLine } from '../pages/ErrorLine.js';
import { useLoad } from '../useLoad.js';
import { operatorApi } from './operator-api.js';

type OnError = (error: unknown) => void;

/**
 * Channels (docs/routing.md) with their state in the instance that answers (breaker, failures,
 * in flight) and whether they are disabled; a channel disabled or enabled with a reason, which
 * the audit row keeps.
 */
export function ChannelsPage({ onError }: { onError: OnError }) {
  const { t } = useI18n();
  const channels = useLoad(() => operatorApi.channels(), onError);
  const reasons = useRowTexts();
  const toggle = (channel: Channel) => {
    const action = channel.disabled ? 'enable' : 'disable';
    operatorApi
      .switchChannel(channel.id, action, reasons.text(channel.id).trim())
      .then(() => {
        reasons.clear(channel.id);
        channels.reload();
      })
      .catch(channels.fail);
  };
  const columns: Column<Channel>[] = [
    { id: 'id', header: t('op.channel'), cell: (channel) => <code>{channel.id}</code> },
    { id: 'model', header: t('op.model'), cell: (channel) => channel.model },
    {
      id: 'upstream',
      header: t('op.upstream'),
      cell: (channel) => (
        <>
          {channel.upstream} · <code>{channel.upstream_model}</code>
        </>
      ),
    },
    {
      id: 'state',
      header: t('op.state'),
      cell: (channel) => (channel.disabled ? t('op.disabled') : t('op.active')),
      cellAttributes: (channel) => ({
        'data-channel-state': channel.disabled ? 'disabled' : 'active',
      }),
    },
    {
      id: 'breaker',
      header: t('op.breaker'),
      cell: (channel) => (
        <>
          {t(`op.breaker.${channel.breaker}`)}
          {channel.cooldown_ends_at !== null && (
            <>
              {' · '}
              <When iso={channel.cooldown_ends_at} />
            </>
          )}
        </>
      ),
    },
    { id: 'inFlight', header: t('op.inFlight'), cell: (channel) => channel.in_flight },
    {
      id: 'reason',
      header: t('op.reasonOptional'),
      cell: (channel) =>
        reasons.input(channel.id, {
          name: 'channel-reason',
          label: t('op.reasonOptional'),
          maxLength: 500,
        }),
    },
    {
      id: 'action',
      header: t('op.action'),
      hiddenHeader: true,
      cell: (channel) => (
        <button
          type="button"
          className={channel.disabled ? undefined : 'danger'}
          onClick={() => toggle(channel)}
        >
          {channel.disabled ? t('op.enable') : t('op.disable')}
        </button>
      ),
    },
  ];
  return (
    <section>
      <h1>{t('op.channels')}</h1>
      <p>{t('op.channelNote')}</p>
      <ErrorLine error={channels.error} />
      {channels.value !== null && (
        <DataTable
          rows={channels.value.data}
          columns={columns}
          rowKey={(channel) => channel.id}
          rowAttributes={(channel) => ({ 'data-channel-id': channel.id })}
          empty={t('op.none')}
          label={t('op.more')}
        />
      )}
    </section>
  );
}
