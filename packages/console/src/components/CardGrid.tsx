import { Fragment, type ReactNode } from 'react';
import { Listed } from './Listed.js';

/**
 * Cards in a grid (as many columns as fit), or what stands instead while there are none to show
 * (Listed: loading, `empty`, nothing once the read `failed`), as DataTable. Each card gets
 * `itemKey` as React key.
 */
export function CardGrid<Item>({
  items,
  itemKey,
  card,
  empty,
  failed = false,
}: {
  items: readonly Item[] | null;
  itemKey: (item: Item) => string;
  card: (item: Item) => ReactNode;
  empty: ReactNode;
  failed?: boolean;
}) {
  return (
    <Listed items={items} empty={empty} failed={failed}>
      {(shown) => (
        <div className="share-grid">
          {shown.map((item) => (
            <Fragment key={itemKey(item)}>{card(item)}</Fragment>
          ))}
        </div>
      )}
    </Listed>
  );
}
