// Checks that real responses match the OpenAPI document: the status is documented for the route and the body
// validates against its schema. Every harness records its /v1 responses and checks them when it closes.

import type { ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

export interface RecordedResponse {
  method: string;
  url: string;
  status: number;
  body: unknown;
}

interface OpenApiDocument {
  paths: Record<
    string,
    Record<string, { responses?: Record<string, { content?: Record<string, { schema?: object }> }> }>
  >;
}

export function createConformanceChecker(document: OpenApiDocument) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (ajv: Ajv2020) => void)(ajv);
  const routes = Object.entries(document.paths).map(([path, operations]) => ({
    path,
    pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
    operations,
    // Literal paths win over templated ones (`/templates/x` vs `/templates/{id}`).
    params: (path.match(/\{/g) ?? []).length,
  }));
  routes.sort((a, b) => a.params - b.params);
  const compiled = new Map<string, ValidateFunction>();

  return function check(response: RecordedResponse): string | undefined {
    const path = response.url.split('?')[0] ?? '';
    const route = routes.find(
      (candidate) => candidate.pattern.test(path) && candidate.operations[response.method.toLowerCase()],
    );
    if (!route) {
      // Unknown routes are not in the document by design: they authenticate, then answer 404 or 405.
      const unknownRouteAnswer = [401, 403, 404, 405, 429].includes(response.status);
      const hasDetail = typeof (response.body as { detail?: unknown } | undefined)?.detail === 'string';
      return unknownRouteAnswer && hasDetail ? undefined : `${response.method} ${path}: not documented`;
    }
    const operation = route.operations[response.method.toLowerCase()];
    const documented = operation?.responses?.[String(response.status)];
    if (!documented) return `${response.method} ${route.path}: status ${response.status} is not documented`;
    const schema = documented.content?.['application/json']?.schema;
    if (!schema) {
      return response.body === undefined || response.body === ''
        ? undefined
        : `${response.method} ${route.path} ${response.status}: body sent but no schema documented`;
    }
    const key = `${response.method} ${route.path} ${response.status}`;
    let validate = compiled.get(key);
    if (!validate) {
      validate = ajv.compile(schema);
      compiled.set(key, validate);
    }
    if (!validate(response.body)) {
      return `${key}: body does not match its schema: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(response.body).slice(0, 300)}`;
    }
    return undefined;
  };
}
