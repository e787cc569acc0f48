import { ApiFailure } from '../api.js';
import { useI18n } from '../i18n.js';
import type { MessageKey } from '../messages/index.js';

/**
 * A failure in words: the gateway's message; for a failure the console names itself a sentence
 * in the viewer's language: no answer, or an answer it cannot read (followed by what it was:
 * `HTTP 502 Bad Gateway: the answer is text/html, not JSON`).
 */
export function failureText(error: unknown, t: (key: MessageKey) => string): string {
  if (error instanceof ApiFailure) {
    if (error.code === 'NETWORK') return t('common.network');
    if (error.code === 'UNEXPECTED_ANSWER')
      return `${t('common.unexpectedAnswer')} (${error.message})`;
    return error.message;
  }
  return error instanceof Error ? error.message : JSON.stringify(error);
}

/** An API error as one line (`common.error` and `failureText`), or nothing. */
export function ErrorLine({ error }: { error: unknown }) {
  const { t } = useI18n();
  if (error === null || error === undefined) return null;
  return (
    <p role="alert" className="error">
      {t('common.error')}
      {failureText(error, t)}
    </p>
  );
}
