// Secrets at rest (D148): AES-256-GCM under a key of the keyring (SECRETS_KEY, or a key file generated
// in DATA_DIR), each ciphertext stored with the id of the key that sealed it, so that keys can be rotated: the
// first key of the keyring seals, every key of it opens, and rows sealed under an older key are sealed again at
// start (`resealWebhookSecrets`). A ciphertext is bound to its row (`context`, the additional authenticated data),
// so one row's ciphertext copied onto another does not open.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Keyring {
  /** The id of the key that seals. */
  currentId: string;
  keys: ReadonlyMap<string, Buffer>;
}

export class SecretsKeyError extends Error {}

const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const ID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;
export const KEY_FILE_NAME = 'secrets.key';

/** A key's default id when SECRETS_KEY gives none: a short fingerprint of the key. */
const fingerprint = (key: Buffer) => `k${createHash('sha256').update(key).digest('hex').slice(0, 8)}`;

/**
 * Reads SECRETS_KEY: `id:base64key[,id:base64key…]`, the first entry sealing, the others kept to open what they
 * sealed; a lone `base64key` gets its fingerprint as id. Each key is 32 random bytes (`openssl rand -base64 32`).
 */
export function parseKeyring(value: string): Keyring {
  const keys = new Map<string, Buffer>();
  let currentId: string | undefined;
  for (const entry of value
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
    const colon = entry.indexOf(':');
    const encoded = colon === -1 ? entry : entry.slice(colon + 1);
    const key = Buffer.from(encoded, 'base64');
    if (key.length !== KEY_BYTES || key.toString('base64') !== encoded) {
      throw new SecretsKeyError(`SECRETS_KEY: each key must be ${KEY_BYTES} bytes in base64 (openssl rand -base64 32)`);
    }
    const id = colon === -1 ? fingerprint(key) : entry.slice(0, colon);
    if (!ID_PATTERN.test(id))
      throw new SecretsKeyError(`SECRETS_KEY: a key id is 1-32 of A-Z a-z 0-9 _ -, got "${id}"`);
    if (keys.has(id)) throw new SecretsKeyError(`SECRETS_KEY: key id "${id}" is given twice`);
    keys.set(id, key);
    currentId ??= id;
  }
  if (currentId === undefined) throw new SecretsKeyError('SECRETS_KEY is empty');
  return { currentId, keys };
}

/** A keyring of one new random key (tests, benchmarks, and the key file's first content). */
export function generateKeyringText(): string {
  const key = randomBytes(KEY_BYTES);
  return `${fingerprint(key)}:${key.toString('base64')}`;
}

/**
 * The keyring from SECRETS_KEY, or else from `DATA_DIR/secrets.key`, which is generated (mode 0600) when absent.
 * Processes that share a database must share the keyring: the same SECRETS_KEY, or the same DATA_DIR.
 */
export function loadKeyring(input: { secretsKey: string | undefined; dataDir: string }): {
  keyring: Keyring;
  source: string;
} {
  if (input.secretsKey) return { keyring: parseKeyring(input.secretsKey), source: 'SECRETS_KEY' };
  const file = join(input.dataDir, KEY_FILE_NAME);
  mkdirSync(input.dataDir, { recursive: true });
  try {
    // `wx`: of two processes starting at once, one writes and both read what it wrote.
    writeFileSync(file, `${generateKeyringText()}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return { keyring: parseKeyring(readFileSync(file, 'utf8').trim()), source: file };
}

export interface Sealed {
  ciphertext: string;
  keyId: string;
}

/** Seals `plaintext` under the keyring's current key, bound to `context`; base64 of iv, tag and ciphertext. */
export function seal(keyring: Keyring, plaintext: string, context: string): Sealed {
  const key = keyring.keys.get(keyring.currentId) as Buffer;
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return { ciphertext: Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64'), keyId: keyring.currentId };
}

/** Opens what `seal` made; throws SecretsKeyError when the key is not in the keyring or the text does not open. */
export function open(keyring: Keyring, sealed: Sealed, context: string): string {
  const key = keyring.keys.get(sealed.keyId);
  if (!key) throw new SecretsKeyError(`no key "${sealed.keyId}" in the keyring (SECRETS_KEY)`);
  const raw = Buffer.from(sealed.ciphertext, 'base64');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretsKeyError(`a secret sealed under "${sealed.keyId}" does not open`);
  }
}
