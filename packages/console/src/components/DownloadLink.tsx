import type { ReactNode } from 'react';
import type { DownloadedFile } from '../api.js';

/**
 * Hands a downloaded file to the browser to save, under the name the gateway gave it, else
 * `fallbackName`.
 */
export function saveFile(file: DownloadedFile, fallbackName: string): void {
  const link = document.createElement('a');
  link.href = URL.createObjectURL(new Blob([file.text], { type: file.mediaType }));
  link.download = file.fileName ?? fallbackName;
  link.click();
  URL.revokeObjectURL(link.href);
}

/**
 * A link to a download of the console API (a CSV export, a statement). Its `href` is the file's
 * own address (to copy, or open elsewhere); a click fetches it through the console's request
 * function (`fetchFile`, e.g. `requestFile` of api.ts), which checks the status and the type
 * first, so that a failure (a 401, a proxy's HTML page) reaches `onError` and shows on the page
 * rather than being saved as the file.
 */
export function DownloadLink({
  href,
  fetchFile,
  fallbackName,
  onError,
  className,
  children,
}: {
  href: string;
  fetchFile: () => Promise<DownloadedFile>;
  fallbackName: string;
  onError: (error: unknown) => void;
  className?: string;
  children: ReactNode;
}) {
  return (
    <a
      className={className}
      href={href}
      download={fallbackName}
      onClick={(event) => {
        event.preventDefault();
        fetchFile()
          .then((file) => saveFile(file, fallbackName))
          .catch(onError);
      }}
    >
      {children}
    </a>
  );
}
