import { useI18n } from '../i18n.js';

/**
 * A key as a person knows it (issue 36, item 5): its name; a key without one as "unnamed" and its
 * hint (`tgk_…abcd`); an upload from the console (`console:<user id>`) as the console; a charge
 * whose record was purged (no key id) as such. Never the key's id, which stays on hover.
 */
export function KeyLabel({
  keyId,
  name,
  hint,
}: {
  keyId: string | null;
  name: string | null | undefined;
  hint: string | null | undefined;
}) {
  const { t } = useI18n();
  const label =
    name != null ? (
      name
    ) : hint != null ? (
      <>
        {t('key.unnamed')} <code className="key-hint">{hint}</code>
      </>
    ) : keyId === null ? (
      t('key.purged')
    ) : keyId.startsWith('console:') ? (
      t('key.console')
    ) : (
      t('key.unnamed')
    );
  return (
    <span className="key-label" title={keyId ?? undefined} data-key-label={keyId ?? ''}>
      {label}
    </span>
  );
}
