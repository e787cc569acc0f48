import type { ConsoleSessionState } from '@tollgate/protocol';
import { useCallback, useEffect, useState, type ReactNode } from 'react';
import { api, ApiFailure, rememberSession } from './api.js';
import { LANGUAGES, useI18n, type Language, type MessageKey } from './i18n.js';
import { OperatorPages } from './operator/OperatorPages.js';
import { AssetsPage } from './pages/AssetsPage.js';
import { AwaitingFunds } from './pages/AwaitingFunds.js';
import { BillingPage } from './pages/BillingPage.js';
import { InvitePage } from './pages/InvitePage.js';
import { KeysPage } from './pages/KeysPage.js';
import { ModelsPage } from './pages/ModelsPage.js';
import { OverviewPage } from './pages/OverviewPage.js';
import { RedeemPage } from './pages/RedeemPage.js';
import { RequestsPage } from './pages/RequestsPage.js';
import { SecurityPage } from './pages/SecurityPage.js';
import { SharesPage } from './pages/SharesPage.js';
import { SignInPage } from './pages/SignInPage.js';
import { SignUpLink, SignUpPage } from './pages/SignUpPage.js';
import { StatusPage } from './pages/StatusPage.js';
import { TaskDetailPage } from './pages/TaskDetailPage.js';
import { TasksPage } from './pages/TasksPage.js';
import { TopUpPage } from './pages/TopUpPage.js';
import { isOperatorPath, navigate, signedInPath, usePath } from './router.js';

const NAV: readonly { path: string; label: MessageKey }[] = [
  { path: '/', label: 'nav.overview' },
  { path: '/keys', label: 'nav.keys' },
  { path: '/models', label: 'nav.models' },
  { path: '/redeem', label: 'nav.redeem' },
  { path: '/topup', label: 'nav.topup' },
  { path: '/billing', label: 'nav.billing' },
  { path: '/requests', label: 'nav.requests' },
  { path: '/tasks', label: 'nav.tasks' },
  { path: '/assets', label: 'nav.assets' },
  { path: '/shares', label: 'nav.shares' },
];

/** Which page the path shows; a signed-out visitor sees sign-in (or the invitation). */
export function App() {
  const path = usePath();
  const [session, setSession] = useState<ConsoleSessionState | null | 'loading'>('loading');
  const signedIn = useCallback((state: ConsoleSessionState | null) => {
    rememberSession(state);
    setSession(state);
  }, []);
  // A 401 on any page means the session ended (signed out elsewhere, expired): show sign-in.
  const onError = useCallback(
    (error: unknown) => {
      if (error instanceof ApiFailure && error.status === 401) signedIn(null);
    },
    [signedIn],
  );
  useEffect(() => {
    api
      .session()
      .then(signedIn)
      .catch(() => signedIn(null));
  }, [signedIn]);

  const invite = /^\/invite\/([^/]+)$/.exec(path);
  if (invite?.[1] !== undefined)
    return (
      <Frame>
        <InvitePage
          token={invite[1]}
          onSignedIn={(state) => {
            signedIn(state);
            navigate('/');
          }}
        />
      </Frame>
    );
  if (session === 'loading') return <Frame>{null}</Frame>;
  if (session === null && path === '/sign-up')
    return (
      <Frame>
        <SignUpPage
          onSignedIn={(state) => {
            signedIn(state);
            navigate('/');
          }}
        />
      </Frame>
    );
  if (session === null)
    return (
      <Frame>
        <SignInPage
          onSignedIn={(state) => {
            signedIn(state);
            if (path === '/sign-in') navigate('/');
          }}
        />
        <SignUpLink />
      </Frame>
    );
  const route = signedInPath(path);
  return (
    <Frame session={session} path={route} onSignOut={() => signedIn(null)}>
      {route === '/security' ? (
        <SecurityPage onError={onError} />
      ) : session.user.role === 'operator' ? (
        <OperatorPages path={route} onError={onError} />
      ) : (
        <Page path={route} onError={onError} />
      )}
    </Frame>
  );
}

/**
 * A member's page for the path: the overview at `/`, 403 for an operator page, 404 for any other
 * address (StatusPage).
 */
function Page({ path, onError: guard }: { path: string; onError: (error: unknown) => void }) {
  if (isOperatorPath(path)) return <StatusPage status={403} />;
  const task = /^\/tasks\/([^/]+)$/.exec(path)?.[1];
  if (task !== undefined)
    return <TaskDetailPage key={task} id={decodeURIComponent(task)} onError={guard} />;
  switch (path) {
    case '/':
      return <OverviewPage onError={guard} />;
    case '/keys':
      return <KeysPage onError={guard} />;
    case '/models':
      return <ModelsPage onError={guard} />;
    case '/redeem':
      return <RedeemPage onError={guard} />;
    case '/topup':
      return <TopUpPage onError={guard} />;
    case '/billing':
      return <BillingPage onError={guard} />;
    case '/requests':
      return <RequestsPage onError={guard} />;
    case '/assets':
      return <AssetsPage onError={guard} />;
    case '/shares':
      return <SharesPage onError={guard} />;
    case '/tasks':
      return (
        <>
          <TasksPage onError={guard} />
          <AwaitingFunds onError={guard} />
        </>
      );
    default:
      return <StatusPage status={404} />;
  }
}

/** Header (title, navigation when signed in, language, sign-out) around a page. */
function Frame({
  children,
  session,
  path,
  onSignOut,
}: {
  children: ReactNode;
  session?: ConsoleSessionState;
  path?: string;
  onSignOut?: () => void;
}) {
  const { t, language, setLanguage } = useI18n();
  return (
    <div className="frame">
      <header className="top">
        <span className="brand">{t('app.title')}</span>
        {session !== undefined && session.user.role !== 'operator' && (
          <nav aria-label={t('app.title')}>
            {NAV.map((item) => (
              <a
                key={item.path}
                href={`/console${item.path === '/' ? '' : item.path}`}
                aria-current={path === item.path ? 'page' : undefined}
                onClick={(event) => {
                  event.preventDefault();
                  navigate(item.path);
                }}
              >
                {t(item.label)}
              </a>
            ))}
          </nav>
        )}
        <span className="tools">
          <label>
            <span className="visually-hidden">{t('nav.language')}</span>
            <select
              aria-label={t('nav.language')}
              value={language}
              onChange={(event) => setLanguage(event.target.value as Language)}
            >
              {LANGUAGES.map((choice) => (
                <option key={choice} value={choice}>
                  {choice === 'zh-CN' ? '中文' : 'English'}
                </option>
              ))}
            </select>
          </label>
          {session !== undefined && (
            <>
              <span className="who">{session.user.email}</span>
              <a
                href="/console/security"
                aria-current={path === '/security' ? 'page' : undefined}
                onClick={(event) => {
                  event.preventDefault();
                  navigate('/security');
                }}
              >
                {t('nav.security')}
              </a>
              <button
                type="button"
                className="secondary"
                onClick={() => {
                  void api.signOut().finally(() => onSignOut?.());
                }}
              >
                {t('nav.signOut')}
              </button>
            </>
          )}
        </span>
      </header>
      <main>{children}</main>
    </div>
  );
}
