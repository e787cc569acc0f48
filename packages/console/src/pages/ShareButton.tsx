import type { Share } from '@tollgate/protocol';
import { useState } from 'react';
import { assetApi } from '../asset-api.js';
import { useI18n } from '../i18n.js';
import { navigate } from '../router.js';
import { ErrorLine } from './ErrorLine.js';

/**
 * Asks for a public share of a file or of a delivered task's first output (`POST
 * /console/api/shares`); once asked, says that an operator reviews it and links to the Shares
 * page, where the link shows once approved.
 */
export function ShareButton({ target }: { target: { asset_id: string } | { task_id: string } }) {
  const { t } = useI18n();
  const [asked, setAsked] = useState<Share | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const ask = () => {
    setBusy(true);
    setError(null);
    assetApi
      .askShare(target)
      .then(setAsked)
      .catch(setError)
      .finally(() => setBusy(false));
  };
  if (asked !== null)
    return (
      <span role="status" className="success" data-share-id={asked.id}>
        {t('shares.asked')}{' '}
        <a
          href="/console/shares"
          onClick={(event) => {
            event.preventDefault();
            navigate('/shares');
          }}
        >
          {t('nav.shares')}
        </a>
      </span>
    );
  return (
    <>
      <button type="button" className="secondary" disabled={busy} onClick={ask}>
        {t('shares.share')}
      </button>
      <ErrorLine error={error} />
    </>
  );
}
