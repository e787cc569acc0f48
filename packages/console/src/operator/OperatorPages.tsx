import { useI18n } from '../i18n.js';
import { StatusPage } from '../pages/StatusPage.js';
import { navigate } from '../router.js';
import { AccountsPage } from './AccountsPage.js';
import { AuditPage, InvitePage, LedgerPage } from './AuditPage.js';
import { ChannelsPage } from './ChannelsPage.js';
import { CodesPage } from './CodesPage.js';
import { DashboardPage } from './DashboardPage.js';
import { RequestsLogPage } from './RequestsLogPage.js';
import { ModelsPage } from './ModelsPage.js';
import { PaymentsPage } from './PaymentsPage.js';
import { ResolvePage } from './ResolvePage.js';
import { ShareReviewPage } from './ShareReviewPage.js';
import { StatementsPage } from './StatementsPage.js';
import { UsageCapPage } from './UsageCapPage.js';
import { UsersPage } from './UsersPage.js';
import './operator.css';

const PAGES = [
  { path: '/admin/dashboard', label: 'op.dash.nav' },
  { path: '/admin/accounts', label: 'op.accounts' },
  { path: '/admin/requests', label: 'op.log.nav' },
  { path: '/admin/codes', label: 'op.codes' },
  { path: '/admin/models', label: 'op.models' },
  { path: '/admin/channels', label: 'op.channels' },
  { path: '/admin/shares', label: 'op.shares' },
  { path: '/admin/resolve', label: 'op.resolve' },
  { path: '/admin/payments', label: 'op.payments' },
  { path: '/admin/usage-cap', label: 'op.usageCap' },
  { path: '/admin/statements', label: 'op.statements' },
  { path: '/admin/audit', label: 'op.audit' },
  { path: '/admin/ledger', label: 'op.ledger' },
  { path: '/admin/invite', label: 'op.invite' },
  { path: '/admin/users', label: 'op.users' },
] as const;

/**
 * Which operator page a path names: each page's own path, an account's (`/admin/accounts/<id>`),
 * and the accounts page at `/` and `/admin`; `null` for any other address (404).
 */
function pageOf(path: string): (typeof PAGES)[number]['path'] | null {
  if (path === '/' || path === '/admin' || /^\/admin\/accounts\/[^/]+$/.test(path))
    return '/admin/accounts';
  return PAGES.find((page) => page.path === path)?.path ?? null;
}

/**
 * An operator's pages: their own navigation, and the page the path names (accounts first), or
 * 404 for an address that names none (a member's page included).
 */
export function OperatorPages({ path, onError }: { path: string; onError: (e: unknown) => void }) {
  const { t } = useI18n();
  const current = pageOf(path);
  return (
    <>
      <nav aria-label={t('op.nav')} className="operator-nav">
        {PAGES.map((page) => (
          <a
            key={page.path}
            href={`/console${page.path}`}
            aria-current={current === page.path ? 'page' : undefined}
            onClick={(event) => {
              event.preventDefault();
              navigate(page.path);
            }}
          >
            {t(page.label)}
          </a>
        ))}
      </nav>
      {current === null ? (
        <StatusPage status={404} />
      ) : current === '/admin/dashboard' ? (
        <DashboardPage onError={onError} />
      ) : current === '/admin/requests' ? (
        <RequestsLogPage onError={onError} />
      ) : current === '/admin/models' ? (
        <ModelsPage onError={onError} />
      ) : current === '/admin/channels' ? (
        <ChannelsPage onError={onError} />
      ) : current === '/admin/codes' ? (
        <CodesPage onError={onError} />
      ) : current === '/admin/shares' ? (
        <ShareReviewPage onError={onError} />
      ) : current === '/admin/resolve' ? (
        <ResolvePage onError={onError} />
      ) : current === '/admin/payments' ? (
        <PaymentsPage onError={onError} />
      ) : current === '/admin/usage-cap' ? (
        <UsageCapPage onError={onError} />
      ) : current === '/admin/statements' ? (
        <StatementsPage onError={onError} />
      ) : current === '/admin/audit' ? (
        <AuditPage onError={onError} />
      ) : current === '/admin/ledger' ? (
        <LedgerPage onError={onError} />
      ) : current === '/admin/invite' ? (
        <InvitePage onError={onError} />
      ) : current === '/admin/users' ? (
        <UsersPage onError={onError} />
      ) : (
        <AccountsPage path={path} onError={onError} />
      )}
    </>
  );
}
