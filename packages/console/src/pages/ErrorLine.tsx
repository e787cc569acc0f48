import { ApiFailure } from '../api.js';
import { useI18n } from '../i18n.js';

/** An API error as one line (its message), or nothing. */
export function ErrorLine({ error }: { error: unknown }) {
  const { t } = useI18n();
  if (error === null || error === undefined) return null;
  const text =
    error instanceof ApiFailure || error instanceof Error ? error.message : JSON.stringify(error);
  return (
    <p role="alert" className="error">
      {t('common.error')}
      {text}
    </p>
  );
}
