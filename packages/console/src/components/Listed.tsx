import type { ReactNode } from 'react';
import { useI18n } from '../i18n.js';

/**
 * A list's items, or what stands instead: "loading" while `items` is null (nothing once the
 * read failed: its error line says why), `empty` when there are none. The one rule of DataTable
 * and CardGrid; `children` shows the items.
 */
export function Listed<Item>({
  items,
  empty,
  failed = false,
  children,
}: {
  items: readonly Item[] | null;
  empty: ReactNode;
  failed?: boolean;
  children: (items: readonly Item[]) => ReactNode;
}) {
  const { t } = useI18n();
  if (items === null) return failed ? null : <p>{t('common.loading')}</p>;
  if (items.length === 0) return <p>{empty}</p>;
  return <>{children(items)}</>;
}
