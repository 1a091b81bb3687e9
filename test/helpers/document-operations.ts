// The operations of the served OpenAPI document under one path prefix: the SDK's tests check that each has its method.
import type { Harness } from './harness.ts';

export interface DocumentOperation {
  id: string;
  method: string;
  path: string;
  /** The operation takes an `Idempotency-Key` header. */
  idempotent: boolean;
  hasBody: boolean;
}

type Operation = {
  operationId: string;
  parameters?: { in: string; name: string }[];
  requestBody?: { required?: boolean };
};

export async function documentOperations(h: Harness, prefix: string): Promise<DocumentOperation[]> {
  const served = await h.app.inject({ method: 'GET', url: '/v1/openapi.json' });
  const document = served.json() as { paths: Record<string, Record<string, Operation>> };
  return Object.entries(document.paths)
    .filter(([path]) => path.startsWith(prefix))
    .flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
        .map(([method, operation]) => ({
          id: operation.operationId,
          method: method.toUpperCase(),
          path,
          idempotent: (operation.parameters ?? []).some(
            (parameter) => parameter.in === 'header' && parameter.name.toLowerCase() === 'idempotency-key',
          ),
          hasBody: operation.requestBody?.required === true,
        })),
    );
}
