import { useState } from 'react';
import { When } from '../money.js';
import { ErrorLine } from '../pages/ErrorLine.js';
import { operatorApi, type Channel } from './operator-api.js';
import { useOperatorText } from './operator-i18n.js';
import { useLoad } from './useLoad.js';

type OnError = (error: unknown) => void;

/**
 * Channels (docs/routing.md) with their state in the instance that answers (breaker, failures,
 * in flight) and whether they are disabled; a channel disabled or enabled with a reason, which
 * the audit row keeps.
 */
export function ChannelsPage({ onError }: { onError: OnError }) {
  const t = useOperatorText();
  const channels = useLoad(() => operatorApi.channels(), onError);
  const [reason, setReason] = useState<Record<string, string>>({});
  const toggle = (channel: Channel) => {
    const action = channel.disabled ? 'enable' : 'disable';
    operatorApi
      .switchChannel(channel.id, action, (reason[channel.id] ?? '').trim())
      .then(() => {
        setReason((given) => ({ ...given, [channel.id]: '' }));
        channels.reload();
      })
      .catch(channels.fail);
  };
  return (
    <section>
      <h1>{t('op.channels')}</h1>
      <p>{t('op.channelNote')}</p>
      <ErrorLine error={channels.error} />
      {channels.value !== null && channels.value.data.length === 0 && <p>{t('op.none')}</p>}
      {channels.value !== null && channels.value.data.length > 0 && (
        <div className="table-wrap" tabIndex={0} role="region" aria-label={t('op.more')}>
          <table>
            <thead>
              <tr>
                <th scope="col">{t('op.channel')}</th>
                <th scope="col">{t('op.model')}</th>
                <th scope="col">{t('op.upstream')}</th>
                <th scope="col">{t('op.state')}</th>
                <th scope="col">{t('op.breaker')}</th>
                <th scope="col">{t('op.inFlight')}</th>
                <th scope="col">{t('op.reasonOptional')}</th>
                <th scope="col">
                  <span className="visually-hidden">{t('op.action')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {channels.value.data.map((channel) => (
                <tr key={channel.id} data-channel-id={channel.id}>
                  <td>
                    <code>{channel.id}</code>
                  </td>
                  <td>{channel.model}</td>
                  <td>
                    {channel.upstream} · <code>{channel.upstream_model}</code>
                  </td>
                  <td data-channel-state={channel.disabled ? 'disabled' : 'active'}>
                    {channel.disabled ? t('op.disabled') : t('op.active')}
                  </td>
                  <td>
                    {t(`op.breaker.${channel.breaker}`)}
                    {channel.cooldown_ends_at !== null && (
                      <>
                        {' · '}
                        <When iso={channel.cooldown_ends_at} />
                      </>
                    )}
                  </td>
                  <td>{channel.in_flight}</td>
                  <td>
                    <input
                      name={`channel-reason-${channel.id}`}
                      aria-label={`${t('op.reasonOptional')}: ${channel.id}`}
                      maxLength={500}
                      value={reason[channel.id] ?? ''}
                      onChange={(e) =>
                        setReason((given) => ({ ...given, [channel.id]: e.target.value }))
                      }
                    />
                  </td>
                  <td>
                    <button
                      type="button"
                      className={channel.disabled ? undefined : 'danger'}
                      onClick={() => toggle(channel)}
                    >
                      {channel.disabled ? t('op.enable') : t('op.disable')}
                    </button>
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
