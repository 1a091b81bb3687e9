// decisions §20: an organization's model `base_url` obeys the webhook endpoints' address policy (§11) — checked when
// saved and again at connect time, as deliveries are. This `fetch` (given to the openai client) connects through
// node:http with the policy's lookup, follows no redirect, and reads at most 1 MiB of answer.
import http from 'node:http';
import https from 'node:https';
import { AddressRefused, checkLiteralHost, guardedLookup } from '../../../lib/address-policy.ts';

const MAX_ANSWER_BYTES = 1024 * 1024;

export function guardedFetch(allowHosts: readonly string[]): typeof fetch {
  return (input, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      let allowed: boolean;
      try {
        ({ allowed } = checkLiteralHost(url.hostname, allowHosts));
      } catch (error) {
        return reject(error);
      }
      if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowed)) {
        return reject(new AddressRefused(`${url.protocol}// is not allowed for ${url.hostname}`));
      }
      const headers = Object.fromEntries(new Headers(init.headers).entries());
      const client = url.protocol === 'https:' ? https : http;
      const request = client.request(
        url,
        {
          method: init.method ?? 'GET',
          headers,
          lookup: guardedLookup(allowed),
          ...(init.signal ? { signal: init.signal } : {}),
        },
        (response) => {
          const chunks: Buffer[] = [];
          let size = 0;
          response.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_ANSWER_BYTES) {
              response.destroy(new Error('the model’s answer is over 1 MiB'));
              return;
            }
            chunks.push(chunk);
          });
          response.on('error', reject);
          response.on('end', () => {
            const answerHeaders = new Headers();
            for (const [name, value] of Object.entries(response.headers)) {
              if (value !== undefined) answerHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
            }
            const status = response.statusCode ?? 502;
            const bodyless = status === 204 || status === 304;
            resolve(new Response(bodyless ? null : Buffer.concat(chunks), { status, headers: answerHeaders }));
          });
        },
      );
      request.on('error', reject);
      if (typeof init.body === 'string') request.end(init.body);
      else request.end();
    });
}
