import type { ReviewShare } from '@tollgate/protocol';
import { useState } from 'react';
import { KeyLabel } from '../components/KeyLabel.js';
import { useI18n } from '../i18n.js';
import { When } from '../money.js';
import { ErrorLine } from '../pages/ErrorLine.js';
import { useLoad } from '../useLoad.js';
import { operatorApi } from './operator-api.js';

/** The share review queue: each pending share with its preview; approve, or reject with a reason. */
export function ShareReviewPage({ onError }: { onError: (error: unknown) => void }) {
  const { t } = useI18n();
  const queue = useLoad(() => operatorApi.pendingShares(), onError);
  return (
    <section>
      <h1>{t('op.pendingShares')}</h1>
      <ErrorLine error={queue.error} />
      {queue.value !== null && queue.value.data.length === 0 && <p>{t('op.none')}</p>}
      <div className="share-grid">
        {queue.value?.data.map((share) => (
          <ShareCard key={share.id} share={share} onDecided={queue.reload} onError={queue.fail} />
        ))}
      </div>
    </section>
  );
}

function ShareCard({
  share,
  onDecided,
  onError,
}: {
  share: ReviewShare;
  onDecided: () => void;
  onError: (error: unknown) => void;
}) {
  const { t } = useI18n();
  const [reason, setReason] = useState('');
  const decide = (decision: 'approve' | 'reject') => {
    operatorApi.decideShare(share.id, decision, reason.trim()).then(onDecided).catch(onError);
  };
  return (
    <article className="card" data-share-id={share.id}>
      <img
        className="preview"
        src={operatorApi.shareContentUrl(share.id)}
        alt={`${t('op.preview')} ${share.id}`}
      />
      <dl className="facts">
        <dt>{t('op.account')}</dt>
        <dd data-share-account={share.account_id}>
          {share.account_email ?? <code>{share.account_id}</code>}
        </dd>
        <dt>{share.task_id === null ? t('op.shareFile') : t('op.shareTask')}</dt>
        <dd>
          {share.task_kind !== null && (
            <>
              {t(`task.kind.${share.task_kind}`)} · {share.task_model} ·{' '}
            </>
          )}
          <code>{share.task_id ?? share.asset_id}</code>
        </dd>
        <dt>{t('op.key')}</dt>
        <dd>
          <KeyLabel keyId={share.key_id} name={share.key_name} hint={share.key_hint} />
        </dd>
        <dt>{t('op.when')}</dt>
        <dd>
          <When iso={share.created_at} />
        </dd>
      </dl>
      <label>
        {t('op.reason')}
        <input
          name={`reason-${share.id}`}
          maxLength={1000}
          value={reason}
          onChange={(e) => setReason(e.target.value)}
        />
      </label>
      <p className="actions">
        <button type="button" onClick={() => decide('approve')}>
          {t('op.approve')}
        </button>
        <button type="button" className="danger" onClick={() => decide('reject')}>
          {t('op.reject')}
        </button>
      </p>
    </article>
  );
}
