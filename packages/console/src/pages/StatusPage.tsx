import { ConsoleLink } from '../components/ConsoleLink.js';
import { useI18n } from '../i18n.js';

/**
 * What an address the console cannot show says, instead of silently showing the overview: 404
 * for a console address with no page (for this user: an operator's pages are not a member's and
 * the other way round), 403 for an operator page opened by a member. Either links back to the
 * overview (an operator's is the accounts page). The gateway answers every /console address with
 * the page itself (200); the status is told on the page.
 */
export function StatusPage({ status }: { status: 404 | 403 }) {
  const { t } = useI18n();
  return (
    <section className="card narrow status-page" data-status-page={status}>
      <h1>
        <span className="status-code">{status}</span>{' '}
        {t(status === 404 ? 'status.notFound' : 'status.forbidden')}
      </h1>
      <p>{t(status === 404 ? 'status.notFoundText' : 'status.forbiddenText')}</p>
      <p>
        <ConsoleLink to="/">{t('status.back')}</ConsoleLink>
      </p>
    </section>
  );
}
