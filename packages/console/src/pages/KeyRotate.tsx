import type { ApiKey } from '@tollgate/protocol';
import { useState } from 'react';
import { useI18n } from '../i18n.js';
import { securityApi } from '../security-api.js';

/**
 * Rotates a key (docs/keys.md, "Rotation"): the new key's plaintext goes to `onRotated`, shown
 * once like a created key; the old key is disabled at once. Only an active key never rotated
 * offers it (the server refuses the others with 409).
 */
export function KeyRotate({
  apiKey,
  onRotated,
  onError,
}: {
  apiKey: ApiKey;
  onRotated: (plaintext: string) => void;
  onError: (error: unknown) => void;
}) {
  const { t } = useI18n();
  const [busy, setBusy] = useState(false);
  if (apiKey.replaced_by !== null)
    return <span className="muted key-rotate">{t('keyRotate.rotated')}</span>;
  if (apiKey.disabled_at !== null) return null;
  const rotate = () => {
    if (!window.confirm(t('keyRotate.confirm'))) return;
    setBusy(true);
    securityApi
      .rotateKey(apiKey.id)
      .then((created) => onRotated(created.key))
      .catch(onError)
      .finally(() => setBusy(false));
  };
  return (
    <button type="button" className="secondary key-rotate" disabled={busy} onClick={rotate}>
      {t('keyRotate.rotate')}
    </button>
  );
}
