import { ApiFailure } from '../api.js';
import { useI18n } from '../i18n.js';
import type { MessageKey } from '../messages/index.js';

/**
 * A failure in the viewer's language (issue 36, item 3): the message of its code (the gateway's
 * error codes, packages/protocol/src/errors.ts, and the console's own: no answer, an answer it
 * cannot read), the field it names, the gateway's code; the gateway's own English message behind
 * a disclosure, for whoever needs the detail.
 */
export function failureText(error: unknown, t: (key: MessageKey) => string): string {
  if (error instanceof ApiFailure) return t(`error.${error.code}`);
  return t('error.other');
}

/** The English detail of a failure: the gateway's message, or what the console saw. */
function detailOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return typeof error === 'string' ? error : JSON.stringify(error);
}

/** A failure as inline content: its message, field and code, the English detail disclosed. */
export function Failure({ error }: { error: unknown }) {
  const { t } = useI18n();
  const failure = error instanceof ApiFailure ? error : null;
  const fromGateway =
    failure !== null && failure.code !== 'NETWORK' && failure.code !== 'UNEXPECTED_ANSWER';
  const detail = detailOf(error);
  return (
    <>
      {failureText(error, t)}
      {failure?.param != null && (
        <>
          {' '}
          ({t('error.param')} <code>{failure.param}</code>)
        </>
      )}
      {fromGateway && (
        <>
          {' '}
          <code className="error-code" data-error-code={failure.code}>
            {failure.code}
          </code>
        </>
      )}
      {detail !== '' && (
        <details className="error-detail">
          <summary>{t('error.detail')}</summary>
          <span lang="en">{detail}</span>
        </details>
      )}
    </>
  );
}

/** An API error as one alert (`common.error` and `Failure`), or nothing. */
export function ErrorLine({ error }: { error: unknown }) {
  const { t } = useI18n();
  if (error === null || error === undefined) return null;
  return (
    <div role="alert" className="error">
      {t('common.error')}
      <Failure error={error} />
    </div>
  );
}
