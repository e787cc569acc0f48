/** Types of wire-schemas.mjs, for the drift test. */
export const generatedFile: string;
export function buildWireSchemas(): Record<string, object>;
export function moduleText(schemas: Record<string, object>): string;
