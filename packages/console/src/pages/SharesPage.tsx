import type { OwnerShare } from '@tollgate/protocol';
import { useState, type FormEvent } from 'react';
import { assetApi } from '../asset-api.js';
import { assetContentUrl } from '../caller-api.js';
import { CardGrid } from '../components/CardGrid.js';
import { Field } from '../components/Field.js';
import { KeyLabel } from '../components/KeyLabel.js';
import { useI18n } from '../i18n.js';
import { When } from '../money.js';
import { useLoad } from '../useLoad.js';
import { AssetPreview } from './AssetsPage.js';
import { ErrorLine } from './ErrorLine.js';

/**
 * The account's shares (docs/console.md, "Assets and shares"), whichever key or console user asked:
 * state, the reviewer's note, the public link once approved (for shares asked for here; a key's
 * share says its link is read with that key), revoke; and a form to ask for one by id.
 */
export function SharesPage({ onError }: { onError: (error: unknown) => void }) {
  const { t } = useI18n();
  const shares = useLoad(() => assetApi.shares(), onError);
  const { error, setError, fail, reload: load } = shares;
  const revoke = (share: OwnerShare) => {
    if (!window.confirm(t('shares.confirmRevoke'))) return;
    setError(null);
    assetApi.revokeShare(share.id).then(load).catch(fail);
  };
  return (
    <section>
      <h1>{t('shares.title')}</h1>
      <AskForm onAsked={load} />
      <ErrorLine error={error} />
      <CardGrid
        items={shares.value?.data ?? null}
        itemKey={(share) => share.id}
        card={(share) => <ShareCard share={share} onRevoke={() => revoke(share)} />}
        empty={t('shares.none')}
        failed={error !== null}
      />
    </section>
  );
}

function ShareCard({ share, onRevoke }: { share: OwnerShare; onRevoke: () => void }) {
  const { t } = useI18n();
  const [copied, setCopied] = useState(false);
  const link = share.public_url === null ? null : `${window.location.origin}${share.public_url}`;
  const live = share.state === 'pending_review' || share.state === 'approved';
  return (
    <article className="card" data-share-id={share.id} data-share-state={share.state}>
      <AssetPreview
        mediaType={share.media_type}
        url={assetContentUrl(share.asset_id)}
        label={share.asset_id}
      />
      <dl className="facts">
        <dt>{t('shares.state')}</dt>
        <dd>{t(`share.${share.state}`)}</dd>
        <dt>{t('shares.target')}</dt>
        <dd>
          <code>{share.task_id ?? share.asset_id}</code>
        </dd>
        <dt>{t('shares.time')}</dt>
        <dd>
          <When iso={share.created_at} />
        </dd>
        {share.reason !== null && (
          <>
            <dt>{t('shares.reason')}</dt>
            <dd>{share.reason}</dd>
          </>
        )}
        <dt>{t('shares.link')}</dt>
        <dd>
          {link !== null ? (
            <a href={link} target="_blank" rel="noreferrer" data-public-link>
              {link}
            </a>
          ) : share.token_source === 'api_key' ? (
            <span className="muted">
              {t('shares.byKey')}{' '}
              <KeyLabel keyId={share.key_id} name={share.key_name} hint={share.key_hint} />
            </span>
          ) : (
            <span className="muted">
              {share.state === 'pending_review' ? t('shares.noLinkYet') : '—'}
            </span>
          )}
        </dd>
      </dl>
      <p className="actions">
        {link !== null && (
          <button
            type="button"
            className="secondary"
            onClick={() => {
              void navigator.clipboard?.writeText(link).then(() => setCopied(true));
            }}
          >
            {copied ? t('shares.copied') : t('shares.copy')}
          </button>
        )}
        {live && (
          <button type="button" className="danger" onClick={onRevoke}>
            {t('shares.revoke')}
          </button>
        )}
      </p>
    </article>
  );
}

/** Asks for a share of a file or a task by its id (the Files and task pages have buttons too). */
function AskForm({ onAsked }: { onAsked: () => void }) {
  const { t } = useI18n();
  const [kind, setKind] = useState<'asset' | 'task'>('asset');
  const [id, setId] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [asked, setAsked] = useState(false);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setAsked(false);
    const target = kind === 'asset' ? { asset_id: id.trim() } : { task_id: id.trim() };
    assetApi
      .askShare(target)
      .then(() => {
        setAsked(true);
        setId('');
        onAsked();
      })
      .catch(setError);
  };
  return (
    <form className="card" onSubmit={submit}>
      <h2>{t('shares.requestTitle')}</h2>
      <p className="muted">{t('shares.requestNote')}</p>
      <div className="inline">
        <label>
          {t('shares.kind')}
          <select
            value={kind}
            onChange={(event) => setKind(event.target.value as 'asset' | 'task')}
          >
            <option value="asset">{t('shares.kind.asset')}</option>
            <option value="task">{t('shares.kind.task')}</option>
          </select>
        </label>
        <Field
          label={t('shares.targetId')}
          name="share-target"
          required
          maxLength={64}
          value={id}
          onValue={setId}
        />
        <button type="submit">{t('shares.submit')}</button>
      </div>
      {asked && (
        <p role="status" className="success">
          {t('shares.asked')}
        </p>
      )}
      <ErrorLine error={error} />
    </form>
  );
}
