import { KEY_PREFIX } from './auth/key-format.js';

/**
 * What a log line must never carry, and how it is blotted out. Two layers: `pathForLog` is the
 * only form in which a request URL is logged, and `redactSecrets` runs over every serialized
 * log line just before it is written (logger.ts), whatever code produced it.
 */
export const REDACTED = '[redacted]';

/**
 * Every route whose path carries a credential, as the route is registered: each `:param` of
 * these patterns IS the credential (an invitation's token opens an operator's or a member's
 * account; a share's token serves its content), so it is redacted by where it stands, whatever
 * its length or shape. The routes register with these very strings (console-static.ts,
 * session-routes.ts, routes/shares.ts), and a test checks that every registered route with a
 * credential-named parameter (`:token`, `:secret`, …) is one of them
 * (test/console/console-credentials-never-logged.test.ts): a new route with a credential in its
 * path goes here, or that test fails.
 */
export const CREDENTIAL_ROUTES = {
  /** The console's set-password page an invitation link opens (`invite_url`). */
  invitationPage: '/console/invite/:token',
  /** The invitation's API: who it is for (GET), set the password (POST). */
  invitation: '/console/api/invitations/:token',
  /** An approved share's public content (GET, HEAD). */
  publicShare: '/s/:token',
} as const;

/** A credential route as path segments: a literal (lower case), or `null` for a credential. */
const CREDENTIAL_PATTERNS: readonly (readonly (string | null)[])[] = Object.values(
  CREDENTIAL_ROUTES,
).map((route) =>
  route
    .split('/')
    .filter((part) => part !== '')
    .map((part) => (part.startsWith(':') ? null : part.toLowerCase())),
);

/**
 * The same routes in free text (an error message quoting a URL, a link): the credential segment
 * after `/console/invite/`, `/console/api/invitations/` or `/s/`, when that path starts the text,
 * follows a separator or a URL's `//host`, so that prose such as `req/s/x` is left alone.
 */
const CREDENTIAL_ROUTE_IN_TEXT = new RegExp(
  `((?:^|[^\\w.~%/-]|//[^\\s/"'\\\\]*)/(?:${Object.values(CREDENTIAL_ROUTES)
    .map((route) =>
      route
        .split('/')
        .filter((part) => part !== '' && !part.startsWith(':'))
        .join('/+'),
    )
    .join('|')})/+)[^\\s/"'\\\\?#&;,]+`,
  'gim',
);

/** A regex for `character`, literally or as its `%XX` escape (either case). */
const literalOrEscaped = (character: string) =>
  `(?:${character.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}|%${character
    .charCodeAt(0)
    .toString(16)
    .padStart(2, '0')})`;

/**
 * Secret shapes, searched case-insensitively. Ours: `tgk_` and at least 8 key characters, also
 * when any of them is percent-encoded (a partial key is still worth hiding). Others' that reach
 * a gateway: OpenAI/Anthropic-style `sk-…`, JWTs, AWS access key ids, GitHub tokens.
 */
const SECRET_SHAPES: readonly RegExp[] = [
  new RegExp(
    `${[...KEY_PREFIX].map(literalOrEscaped).join('')}(?:[0-9a-z]|%[0-9a-f]{2}){8,}`,
    'gi',
  ),
  /\bsk-[0-9a-z_-]{16,}/gi,
  /\beyJ[0-9a-z_-]{8,}\.[0-9a-z_-]{8,}\.[0-9a-z_-]*/gi,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\bgh[pousr]_[0-9a-z]{30,}/gi,
];

/**
 * The credential of an Authorization value wherever it appears: anything after `Bearer`, and a
 * token68 of 8 or more characters after `Basic` (so prose such as "Basic checks" survives).
 */
const CREDENTIAL_AFTER_SCHEME =
  /\b(Bearer(?:\s|%20|\+)+)[^\s"'\\,;&]+|\b(Basic(?:\s|%20|\+)+)[0-9a-z._~+/-]{8,}=*/gi;

/** `name=value` where the name says the value is a credential (URLs, matrix parameters, cookies). */
const CREDENTIAL_PARAMETER =
  /\b(api[_-]?key|access[_-]?token|refresh[_-]?token|token|key|secret|password|passwd|authorization|signature|x-amz-signature|sig)(=|%3d)[^\s"'\\&;#]+/gi;

/**
 * A credential header written as `name: value` or as a JSON member (`"x-api-key":"…"`): the
 * value of `x-api-key` (Anthropic's clients send the key there) or of an `api-key` header.
 */
const CREDENTIAL_HEADER = /\b((?:x-)?api[_-]?key"?\s*:\s*"?)[^\s"'\\,;&]+/gi;

/** Replaces every secret-shaped part of `text`; cheap enough to run on every log line. */
export function redactSecrets(text: string): string {
  let redacted = text;
  for (const shape of SECRET_SHAPES) redacted = redacted.replace(shape, REDACTED);
  return redacted
    .replace(
      CREDENTIAL_AFTER_SCHEME,
      (_, bearer?: string, basic?: string) => `${bearer ?? basic ?? ''}${REDACTED}`,
    )
    .replace(CREDENTIAL_PARAMETER, `$1=${REDACTED}`)
    .replace(CREDENTIAL_HEADER, `$1${REDACTED}`)
    .replace(CREDENTIAL_ROUTE_IN_TEXT, `$1${REDACTED}`);
}

/**
 * A long run of letters and digits: key material without its prefix (our key body is 49
 * characters), or another system's opaque token. Our own ids are at most 31 characters after
 * their prefix, and model ids carry dashes, so neither is caught. A safety net only: our own
 * credentials in paths are redacted by their route (CREDENTIAL_ROUTES), whatever their length.
 */
const OPAQUE_TOKEN = /[0-9A-Za-z]{40,}/;

/** Logged paths are cut here: a 16 KiB URL must not become a 16 KiB log line. */
const MAX_LOGGED_PATH = 256;

/**
 * The only form in which a request URL reaches a log: the path without its query string or
 * fragment, each segment kept as sent unless it is the credential of a CREDENTIAL_ROUTES path,
 * or its decoded form holds a secret shape, a matrix parameter (`;api_key=…`) or an opaque
 * token, in which case the whole segment becomes `[redacted]`. Never throws, whatever the
 * encoding.
 */
export function pathForLog(url: string): string {
  const end = url.search(/[?#]/);
  const path = end === -1 ? url : url.slice(0, end);
  const segments = path.split('/');
  const credentials = credentialSegments(segments);
  const logged = segments
    .map((segment, index) =>
      credentials.has(index) || segmentLooksSecret(segment) ? REDACTED : segment,
    )
    .join('/');
  return logged.length > MAX_LOGGED_PATH ? `${logged.slice(0, MAX_LOGGED_PATH)}…` : logged;
}

/**
 * The indexes of `segments` that are the credential of a CREDENTIAL_ROUTES path. The path is
 * compared as a router or a browser might read it, so that no spelling of a credential route
 * gets its token logged: segments decoded and in any case, empty and `.` segments skipped, `..`
 * going up one; a longer path (`/s/<token>/x`, which no route answers) still has its
 * credential redacted.
 */
function credentialSegments(segments: readonly string[]): ReadonlySet<number> {
  const found = new Set<number>();
  const walked: { index: number; name: string }[] = [];
  for (const [index, segment] of segments.entries()) {
    const name = decodeEscapes(segment).toLowerCase();
    if (name === '' || name === '.') continue;
    if (name === '..') walked.pop();
    else walked.push({ index, name });
  }
  for (const pattern of CREDENTIAL_PATTERNS) {
    if (walked.length < pattern.length) continue;
    if (!pattern.every((part, at) => part === null || part === walked[at]?.name)) continue;
    pattern.forEach((part, at) => {
      const segment = walked[at];
      if (part === null && segment !== undefined) found.add(segment.index);
    });
  }
  return found;
}

function segmentLooksSecret(segment: string): boolean {
  if (segment === '') return false;
  const decoded = decodeEscapes(segment);
  return (
    decoded.includes(';') ||
    decoded.includes('#') ||
    OPAQUE_TOKEN.test(decoded) ||
    redactSecrets(decoded) !== decoded
  );
}

/**
 * Decodes ASCII `%XX` escapes one by one, repeatedly (double encoding included), leaving
 * malformed or non-ASCII escapes as they are, so it cannot throw as `decodeURIComponent` does.
 * Enough to see a key however its characters were escaped.
 */
export function decodeEscapes(text: string): string {
  let current = text;
  for (let round = 0; round < 4 && current.includes('%'); round += 1) {
    const next = current.replace(/%([0-7][0-9a-f])/gi, (_, hex: string) =>
      String.fromCharCode(Number.parseInt(hex, 16)),
    );
    if (next === current) break;
    current = next;
  }
  return current;
}
