import type { MessageKey } from '../messages/index.js';
import { useI18n } from '../i18n.js';

const NAMES = new Set([
  'input',
  'cache_read',
  'cache_write',
  'cache_write_1h',
  'output',
  'reasoning',
  'request',
  'image',
  'video_second',
  'reference_image',
  'input_token',
  'output_token',
]);

/**
 * A line item's name in the viewer's language (a request's token items, a task's images and
 * seconds), and a task item's detail (`1024x1024 hd`, `640x360 with audio`, `first 1 free`) with
 * its words translated; the wire name stays in `data-line-item`.
 */
export function LineItemName({ name, detail }: { name: string; detail?: string }) {
  const { t } = useI18n();
  const key: MessageKey = NAMES.has(name) ? (`lineItem.${name}` as MessageKey) : 'lineItem.other';
  return (
    <span data-line-item={name}>
      {t(key)}
      {detail !== undefined && detail !== '' && (
        <>
          {' '}
          <span className="muted">{detailText(detail, t)}</span>
        </>
      )}
    </span>
  );
}

/** A task item's detail: sizes and qualities as they are, its English words translated. */
function detailText(detail: string, t: (key: MessageKey) => string): string {
  return detail
    .replace(/\bwith audio\b/, t('lineItem.withAudio'))
    .replace(/\bfirst (\d+) free\b/, (_all, n: string) => t('lineItem.firstFree').replace('{n}', n))
    .replace(/\bnone free\b/, t('lineItem.noneFree'));
}
