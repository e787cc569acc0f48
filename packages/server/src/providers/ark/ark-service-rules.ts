/**
 * What Volcengine Ark documents of its video generation tasks that the gateway plans around
 * (docs/providers.md, "Volcengine Ark (video tasks)"). Written from Ark's API reference
 * ("查询视频生成任务 API", "创建视频生成任务 API"); none of it is read from a configuration,
 * because it is the service's rule, not an operator's choice.
 */

/**
 * A task is answered for 7 days: `GET /contents/generations/tasks/{id}` and the task list cover
 * the tasks created in [T − 7 days, T), T being the moment of the query. Past it a poll cannot
 * learn what became of the task.
 */
export const ARK_QUERY_RETENTION_MS = 7 * 86_400_000;

/** The longest pre-signed lifetime TOS (Ark's object storage) grants a URL: 7 days, in seconds. */
const MOST_SIGNED_SECONDS = 7 * 86_400;
const TOS_DATE = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;

/**
 * When a result URL stops being served, in ms since the epoch, read from the URL itself: Ark's
 * `content.video_url` is a TOS pre-signed URL, valid 24 hours (the video is deleted then), that
 * carries its signing time `X-Tos-Date` (`yyyyMMddTHHmmssZ`, UTC) and lifetime `X-Tos-Expires`
 * (seconds). Undefined when the URL says nothing readable of it (not pre-signed): its download
 * then succeeds or fails on its own, with no expiry assumed. The parameter names are matched
 * without regard to case, as the signer writes them.
 */
export function signedUrlExpiresAt(url: string): number | undefined {
  let parameters: URLSearchParams;
  try {
    parameters = new URL(url).searchParams;
  } catch {
    return undefined;
  }
  let date: string | undefined;
  let expires: string | undefined;
  for (const [name, value] of parameters) {
    const lower = name.toLowerCase();
    if (lower === 'x-tos-date') date = value;
    else if (lower === 'x-tos-expires') expires = value;
  }
  if (date === undefined || expires === undefined) return undefined;
  const signed = TOS_DATE.exec(date);
  const seconds = Number(expires);
  if (signed === null || !/^\d{1,7}$/.test(expires) || seconds > MOST_SIGNED_SECONDS)
    return undefined;
  const [, year, month, day, hour, minute, second] = signed;
  const signedAt = Date.parse(`${year}-${month}-${day}T${hour}:${minute}:${second}Z`);
  // A date that does not exist (month 13, 31 April) says nothing: a wrong expiry in the past
  // would give up a video that could still be downloaded.
  if (!Number.isFinite(signedAt)) return undefined;
  const written = new Date(signedAt).toISOString().replace(/[-:]/g, '').slice(0, 15) + 'Z';
  return written === date ? signedAt + seconds * 1000 : undefined;
}
