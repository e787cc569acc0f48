import type { ConsoleModel } from '@tollgate/protocol';
import { useId, useState } from 'react';
import {
  callSnippets,
  chatModelsFor,
  gatewayBaseUrl,
  gatewayRoot,
  type Snippet,
  type SnippetId,
} from '../how-to-call.js';
import { useI18n } from '../i18n.js';

/** The key the snippets are for: its plaintext (shown once), allowlist and idempotency choice. */
export interface CallingKey {
  readonly plaintext: string;
  readonly allowed: readonly string[] | null;
  readonly optional: boolean;
}

/**
 * How to call the gateway (docs/console.md, "How to call"): the base URL, the idempotency rule
 * and every snippet of how-to-call.ts, each with a copy button. With `apiKey` (the key just
 * created or rotated) the snippets carry its plaintext; without, the `tgk_…` placeholder.
 */
export function HowToCall({
  models,
  apiKey,
}: {
  /** The models the member may call (their chat models fill the snippets), `null` while loading. */
  models: readonly ConsoleModel[] | null;
  apiKey?: CallingKey;
}) {
  const { t } = useI18n();
  const headingId = useId();
  const chat = chatModelsFor(models ?? [], apiKey?.allowed ?? null);
  const [chosen, setChosen] = useState<string | null>(null);
  const model = chosen !== null && chat.includes(chosen) ? chosen : (chat[0] ?? null);
  const snippets = callSnippets({
    origin: window.location.origin,
    key: apiKey?.plaintext ?? null,
    model,
  });
  return (
    <section className="card how-to-call" aria-labelledby={headingId} data-how-to-call="">
      <h2 id={headingId}>
        {t(apiKey === undefined ? 'howToCall.title' : 'howToCall.titleForKey')}
      </h2>
      <CallAddresses />
      <p>{t('howToCall.idempotencyRule')}</p>
      <p>{t('howToCall.optionalRule')}</p>
      {apiKey === undefined && <p className="muted">{t('howToCall.placeholder')}</p>}
      {apiKey !== undefined && !apiKey.optional && (
        <p className="warning">{t('howToCall.keyNotOptional')}</p>
      )}
      {models !== null && chat.length === 0 && (
        <p className="muted">{t('howToCall.noChatModel')}</p>
      )}
      {chat.length > 1 && (
        <label>
          {t('howToCall.model')}{' '}
          <select
            name="snippet-model"
            value={model ?? ''}
            onChange={(event) => setChosen(event.target.value)}
          >
            {chat.map((id) => (
              <option key={id} value={id}>
                {id}
              </option>
            ))}
          </select>
        </label>
      )}
      {snippets.map((snippet, index) => (
        <SnippetBlock
          key={snippet.id}
          snippet={snippet}
          // The key each client needs is said once, at its first snippet.
          firstOfClient={clientOf(snippets[index - 1]?.id) !== clientOf(snippet.id)}
        />
      ))}
    </section>
  );
}

/** `codex-config` and `codex-run` are one client's. */
function clientOf(id: SnippetId | undefined): string | undefined {
  return id?.split('-')[0];
}

/** The base URL and the root, as the page's own origin gives them. */
export function CallAddresses() {
  const { t } = useI18n();
  const origin = window.location.origin;
  return (
    <dl className="call-addresses">
      <dt>{t('howToCall.baseUrl')}</dt>
      <dd>
        <code data-testid="base-url">{gatewayBaseUrl(origin)}</code>
      </dd>
      <dt>{t('howToCall.root')}</dt>
      <dd>
        <code>{gatewayRoot(origin)}</code>
      </dd>
    </dl>
  );
}

function SnippetBlock({ snippet, firstOfClient }: { snippet: Snippet; firstOfClient: boolean }) {
  const { t } = useI18n();
  const [copied, setCopied] = useState(false);
  const title = t(`howToCall.snippet.${snippet.id}`);
  const copy = () => {
    void navigator.clipboard.writeText(snippet.text).then(() => setCopied(true));
  };
  return (
    <div className="snippet" data-snippet={snippet.id}>
      <h3>{title}</h3>
      {firstOfClient && (
        <p className="muted">
          {t(snippet.keyNeed === 'any' ? 'howToCall.worksAny' : 'howToCall.worksOptional')}
        </p>
      )}
      <pre>
        <code className={`language-${snippet.language}`}>{snippet.text}</code>
      </pre>
      <button type="button" className="secondary" onClick={copy}>
        {t(copied ? 'howToCall.copiedSnippet' : 'howToCall.copySnippet')}
        <span className="visually-hidden"> {title}</span>
      </button>
    </div>
  );
}
