// Replays recorded /v1 exchanges against the OpenAPI document with a real OpenAPI validator (openapi-backend): the
// route and status are documented, the response body and headers match, and the request agrees with the answer:
// a request the document refuses is never accepted, and a request it accepts is never refused by schema
// validation. Every harness records its exchanges and checks them when it closes.
import addFormats from 'ajv-formats';
import { type Document, OpenAPIBackend, SetMatchType } from 'openapi-backend';
import { addCountryFormat } from '../../src/http/validation.ts';

type Json = any;

export interface RecordedResponse {
  method: string;
  url: string;
  status: number;
  body: unknown;
  /** The request as sent (absent on records made before requests were kept). */
  requestHeaders?: Record<string, string>;
  requestBody?: unknown;
  responseHeaders?: Record<string, unknown>;
}

/**
 * Issue types of schema validation that no service rule gives for a query, path or header value. Bodies are not
 * checked this way: services refuse bodies by rules a schema cannot say (options of a RADIO property, 1–100
 * recipients, a value of the property's kind) with the same issue types; nor list lengths (`property_filter` counts
 * entries inside one comma-separated value).
 */
const SCHEMA_ISSUE =
  /^(missing|extra_forbidden|enum|[a-z]+_type|[a-z]+_parsing|greater_than(_equal)?|less_than(_equal)?|string_(too_short|too_long|pattern_mismatch))$/;

const stringHeaders = (headers: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(headers)
      .filter(([, value]) => value !== undefined)
      .map(([name, value]) => [name.toLowerCase(), Array.isArray(value) ? value.join(', ') : String(value)]),
  );

function queryOf(url: string): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const [name, value] of new URL(url, 'http://localhost').searchParams) {
    const seen = query[name];
    query[name] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
  }
  return query;
}

const messages = (errors: unknown) =>
  ((errors ?? []) as { instancePath?: string; message?: string }[])
    .map((error) => `${error.instancePath ?? ''} ${error.message ?? ''}`.trim())
    .join('; ');

export async function createConformanceChecker(document: object) {
  const api = new OpenAPIBackend({
    definition: structuredClone(document) as Document,
    strict: false,
    // Quick skips openapi-backend's own check of the document, which knows OpenAPI 3.0 only; the 3.1 document is
    // checked by test/api/http/openapi.test.ts (schema validator and Redocly lint).
    quick: true,
    validate: true,
    coerceTypes: true,
    ajvOpts: { strict: false, allErrors: true },
    customizeAjv: (ajv) => {
      (addFormats as unknown as (instance: typeof ajv) => void)(ajv);
      addCountryFormat(ajv);
      return ajv;
    },
  });
  await api.init();

  return function check(exchange: RecordedResponse): string | undefined {
    const path = exchange.url.split('?')[0] ?? '';
    const request = {
      method: exchange.method.toLowerCase(),
      path,
      query: queryOf(exchange.url),
      headers: stringHeaders(exchange.requestHeaders ?? {}),
      ...(exchange.requestBody !== undefined ? { body: exchange.requestBody } : {}),
    };
    const operation = api.matchOperation(request);
    if (!operation) {
      // Unknown routes are not in the document by design: they authenticate, then answer 404 or 405.
      const unknownRouteAnswer = [401, 403, 404, 405, 429].includes(exchange.status);
      const hasDetail = typeof (exchange.body as { detail?: unknown } | undefined)?.detail === 'string';
      return unknownRouteAnswer && hasDetail ? undefined : `${exchange.method} ${path}: not documented`;
    }
    const key = `${exchange.method} ${operation.path} ${exchange.status}`;
    if (!operation.responses?.[String(exchange.status)]) return `${key}: status not documented`;

    const response = api.validateResponse(exchange.body ?? null, operation, exchange.status);
    if (exchange.status !== 204 && response.errors?.length) {
      return `${key}: body does not match: ${messages(response.errors)} in ${JSON.stringify(exchange.body).slice(0, 300)}`;
    }
    if (exchange.responseHeaders) {
      const sent = stringHeaders(exchange.responseHeaders);
      const headers = api.validateResponseHeaders(sent, operation, {
        statusCode: exchange.status,
        setMatchType: SetMatchType.Any,
      });
      if (headers.errors?.length) return `${key}: headers do not match: ${messages(headers.errors)}`;
      const declared = (operation.responses[String(exchange.status)] as { headers?: Record<string, Json> }).headers;
      for (const [name, header] of Object.entries(declared ?? {})) {
        if (header.required && sent[name.toLowerCase()] === undefined) return `${key}: header ${name} missing`;
      }
    }

    // Requests are checked only where they were recorded, and only once the key was accepted (401/403/429 come
    // before validation).
    if (!exchange.requestHeaders || [401, 403, 429].includes(exchange.status)) return undefined;
    let validated: ReturnType<typeof api.validateRequest>;
    try {
      validated = api.validateRequest(request, operation);
    } catch (error) {
      // A URL the validator cannot even decode (invalid percent-encoding): the server must have refused it too.
      return exchange.status >= 400 ? undefined : `${key}: accepted an undecodable request (${String(error)})`;
    }
    if (!validated.valid && exchange.status < 400) {
      return `${key}: accepted a request the document refuses: ${messages(validated.errors)} (${exchange.url} ${JSON.stringify(exchange.requestBody)?.slice(0, 300)})`;
    }
    const issues = (exchange.body as { detail?: unknown } | undefined)?.detail;
    if (validated.valid && exchange.status === 422 && Array.isArray(issues)) {
      const schemaIssue = (issues as { type?: string; loc?: unknown[] }[]).find(
        (issue) => issue.loc?.[0] !== 'body' && SCHEMA_ISSUE.test(issue.type ?? ''),
      );
      if (schemaIssue) {
        return `${key}: refused (${schemaIssue.type} at ${JSON.stringify(schemaIssue.loc)}) a request the document accepts: ${exchange.url} ${JSON.stringify(exchange.requestBody)?.slice(0, 200)}`;
      }
    }
    return undefined;
  };
}
