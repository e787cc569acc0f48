import { Validator } from '@seriousme/openapi-schema-validator';
import { wireSchemas } from '@tollgate/protocol/wire-schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWireSchemas } from '../../../protocol/scripts/wire-schemas.mjs';
import { dialects } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Risks: the published OpenAPI document is not valid OpenAPI 3.1 (generators and validators
 * refuse it), and the response schemas in it drift from the protocol's TypeScript types.
 */
describe('the OpenAPI document', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startGateway(dialects[0]!);
  });
  afterAll(async () => gateway.close());

  it('is valid OpenAPI 3.1, served without a key', async () => {
    const response = await gateway.call('GET', '/v1/openapi.json');
    expect(response.statusCode).toBe(200);
    expect(response.headers['x-service-request-id']).toMatch(/^req_/);
    const document = response.json<{ openapi: string; paths: Record<string, unknown> }>();
    expect(document.openapi).toBe('3.1.0');
    const result = await new Validator().validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(Object.keys(document.paths).every((path) => path.startsWith('/v1/'))).toBe(true);
  });

  it('refuses a key in its URL, as every route does', async () => {
    const response = await gateway.call('GET', '/v1/openapi.json?api_key=tgk_anything');
    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({ error: { code: 'UNAUTHENTICATED' } });
  });

  it('describes exactly the /v1 routes the gateway registers', async () => {
    const document = (await gateway.call('GET', '/v1/openapi.json')).json<{
      paths: Record<string, Record<string, unknown>>;
    }>();
    const documented = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(documented.sort()).toEqual([...gateway.app.v1Routes].sort());
    expect(documented.length).toBeGreaterThanOrEqual(31);
  });

  it('has no unused component: each schema and response is reachable from a path', async () => {
    const document = (await gateway.call('GET', '/v1/openapi.json')).json<OpenApiDocument>();
    expect(unusedComponents(document)).toEqual([]);
  });

  it('names where it is served (servers) and its licence', async () => {
    const document = (await gateway.call('GET', '/v1/openapi.json')).json<OpenApiDocument>();
    // Relative: resolved against the URL the document was fetched from (docs/openapi.md).
    expect(document.servers).toEqual([{ url: '/', description: expect.any(String) as string }]);
    expect(document.info.license).toEqual({ name: 'Apache-2.0', identifier: 'Apache-2.0' });
  });

  it('uses response schemas generated from the current protocol types', () => {
    expect(wireSchemas).toEqual(buildWireSchemas());
  });
});

interface OpenApiDocument {
  info: { license?: unknown };
  servers?: unknown;
  security?: Record<string, unknown>[];
  paths: Record<string, Record<string, { security?: Record<string, unknown>[] }>>;
  components: Record<string, Record<string, unknown>>;
}

/**
 * `components.<kind>.<name>` entries nothing reaches: the `$ref`s outside `components`, then
 * those of the components they reach, transitively; security schemes by the `security` lists.
 */
function unusedComponents(document: OpenApiDocument): string[] {
  const { components, ...outside } = document;
  const used = new Set<string>();
  const pending = [...refsIn(outside)];
  for (let ref = pending.pop(); ref !== undefined; ref = pending.pop()) {
    if (used.has(ref)) continue;
    used.add(ref);
    const [kind = '', name = ''] = ref.replace('#/components/', '').split('/');
    pending.push(...refsIn(components[kind]?.[name]));
  }
  const requirements = [
    ...(document.security ?? []),
    ...Object.values(document.paths).flatMap((item) =>
      Object.values(item).flatMap((operation) => operation.security ?? []),
    ),
  ];
  for (const requirement of requirements)
    for (const name of Object.keys(requirement)) used.add(`#/components/securitySchemes/${name}`);
  return Object.entries(components)
    .flatMap(([kind, entries]) =>
      Object.keys(entries).map((name) => `#/components/${kind}/${name}`),
    )
    .filter((pointer) => !used.has(pointer));
}

function refsIn(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(refsIn);
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, inner]) =>
    key === '$ref' && typeof inner === 'string' ? [inner] : refsIn(inner),
  );
}
