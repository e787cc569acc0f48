import type { Asset } from '@tollgate/protocol';
import { useState, type DragEvent } from 'react';
import { ApiFailure } from '../api.js';
import { assetApi, uploadAsset } from '../asset-api.js';
import { assetContentUrl } from '../caller-api.js';
import { CardGrid } from '../components/CardGrid.js';
import { useI18n } from '../i18n.js';
import { When } from '../money.js';
import { useLoad } from '../useLoad.js';
import { ErrorLine } from './ErrorLine.js';
import { ShareButton } from './ShareButton.js';

/**
 * The account's files (docs/console.md, "Assets and shares"): upload by choosing or dropping a
 * file (with progress), the list with previews of images and videos, a share button, and delete,
 * which a request or task still using the file refuses (`ASSET_IN_USE`, said in words).
 */
export function AssetsPage({ onError }: { onError: (error: unknown) => void }) {
  const { t } = useI18n();
  const assets = useLoad(() => assetApi.assets(), onError);
  const { error, setError, fail, reload: load } = assets;
  const [inUse, setInUse] = useState<string | null>(null);
  const [progress, setProgress] = useState<number | null>(null);
  const [uploaded, setUploaded] = useState<Asset | null>(null);
  const [dragging, setDragging] = useState(false);
  const upload = (file: File | undefined) => {
    if (file === undefined) return;
    setError(null);
    setUploaded(null);
    setProgress(0);
    uploadAsset(file, setProgress)
      .then((asset) => {
        setUploaded(asset);
        load();
      })
      .catch(fail)
      .finally(() => setProgress(null));
  };
  const onDrop = (event: DragEvent) => {
    event.preventDefault();
    setDragging(false);
    upload(event.dataTransfer.files[0]);
  };
  const remove = (asset: Asset) => {
    if (!window.confirm(t('assets.confirmDelete'))) return;
    setError(null);
    setInUse(null);
    assetApi
      .deleteAsset(asset.id)
      .then(load)
      .catch((failure: unknown) => {
        if (failure instanceof ApiFailure && failure.code === 'ASSET_IN_USE') setInUse(asset.id);
        else fail(failure);
      });
  };

  return (
    <section>
      <h1>{t('assets.title')}</h1>
      <div
        className={`card dropzone${dragging ? ' dragging' : ''}`}
        data-dropzone
        onDragOver={(event) => {
          event.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={onDrop}
      >
        <p>{t('assets.drop')}</p>
        <label>
          {t('assets.choose')}
          <input
            type="file"
            name="file"
            accept="image/*,video/*,audio/*"
            disabled={progress !== null}
            onChange={(event) => {
              upload(event.target.files?.[0]);
              event.target.value = '';
            }}
          />
        </label>
        {progress !== null && (
          <p role="status">
            <label>
              {t('assets.uploading')}
              <progress max={1} value={progress} />
            </label>
          </p>
        )}
        {uploaded !== null && (
          <p role="status" className="success">
            {t('assets.uploaded')}
            <code>{uploaded.id}</code>
          </p>
        )}
      </div>
      <ErrorLine error={error} />
      {inUse !== null && (
        <p role="alert" className="error" data-asset-in-use={inUse}>
          {t('assets.inUse')}
        </p>
      )}
      <CardGrid
        items={assets.value?.data ?? null}
        itemKey={(asset) => asset.id}
        card={(asset) => <AssetCard asset={asset} onDelete={() => remove(asset)} />}
        empty={t('assets.none')}
        failed={error !== null}
      />
    </section>
  );
}

function AssetCard({ asset, onDelete }: { asset: Asset; onDelete: () => void }) {
  const { t } = useI18n();
  const url = assetContentUrl(asset.id);
  return (
    <article className="card" data-asset-id={asset.id}>
      <AssetPreview mediaType={asset.media_type} url={url} label={asset.file_name ?? asset.id} />
      <dl className="facts">
        <dt>{t('assets.name')}</dt>
        <dd>{asset.file_name ?? <code>{asset.id}</code>}</dd>
        <dt>{t('assets.type')}</dt>
        <dd>
          <code>{asset.media_type}</code>
          {asset.width !== null && asset.height !== null && ` ${asset.width}×${asset.height}`}
        </dd>
        <dt>{t('assets.size')}</dt>
        <dd>{asset.bytes.toLocaleString('en-US')} B</dd>
        <dt>{t('assets.time')}</dt>
        <dd>
          <When iso={asset.created_at} />
        </dd>
      </dl>
      <p className="actions">
        <a href={url} download>
          {t('assets.download')}
        </a>
        <ShareButton target={{ asset_id: asset.id }} />
        <button type="button" className="danger" onClick={onDelete}>
          {t('assets.delete')}
        </button>
      </p>
    </article>
  );
}

/** An image or a video in the page; other media get no preview (the download link remains). */
export function AssetPreview({
  mediaType,
  url,
  label,
}: {
  mediaType: string;
  url: string;
  label: string;
}) {
  if (mediaType.startsWith('image/')) return <img className="preview" src={url} alt={label} />;
  if (mediaType.startsWith('video/'))
    return <video className="preview" src={url} controls preload="metadata" aria-label={label} />;
  return null;
}
