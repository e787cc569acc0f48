/** `Bearer <token>` from an Authorization header, or undefined when absent or not a bearer. */
export function bearerTokenOrNothing(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}
