// Request URLs as they may appear in logs: the webhook handshake's `hub.verify_token` and any value that carries
// an API key (`oak_…`) in a query string are replaced, so that neither secret reaches a log line (decisions D27).

const REDACTED = '[redacted]';
const SECRET_NAMES = new Set(['hub.verify_token']);

function redactPart(part: string): string {
  const equals = part.indexOf('=');
  if (equals < 0) return /oak_/i.test(safeDecode(part)) ? REDACTED : part;
  const name = part.slice(0, equals);
  const value = part.slice(equals + 1);
  if (SECRET_NAMES.has(safeDecode(name).toLowerCase()) || /oak_/i.test(safeDecode(value))) {
    return `${name}=${REDACTED}`;
  }
  return part;
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return value;
  }
}

export function redactUrl(url: string | undefined): string | undefined {
  if (url === undefined) return url;
  const question = url.indexOf('?');
  if (question < 0) return url;
  const query = url.slice(question + 1);
  return `${url.slice(0, question)}?${query.split(/[&;]/).map(redactPart).join('&')}`;
}
