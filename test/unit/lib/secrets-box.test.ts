// The keyring of secrets at rest (D148): SECRETS_KEY's format and its errors, the key file generated in
// DATA_DIR for the embedded default (private to its owner, the same key on every start), and sealing bound to its
// row.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.ts';
import {
  generateKeyringText,
  KEY_FILE_NAME,
  loadKeyring,
  open,
  parseKeyring,
  SecretsKeyError,
  seal,
} from '../../../src/lib/secrets-box.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

describe('SECRETS_KEY', () => {
  it('takes id:key pairs, the first sealing, and a lone key named by its fingerprint', () => {
    const [a, b] = [generateKeyringText(), generateKeyringText()];
    const ring = parseKeyring(`new:${a.split(':')[1]},${b}`);
    expect(ring.currentId).toBe('new');
    expect([...ring.keys.keys()]).toEqual(['new', b.split(':')[0]]);
    expect(parseKeyring(a.split(':')[1] as string).currentId).toBe(a.split(':')[0]);
  });

  it('refuses a short key, a bad id or a repeated id, and the config says so at start', () => {
    const key = generateKeyringText().split(':')[1] as string;
    expect(() => parseKeyring('k1:c2hvcnQ=')).toThrow(SecretsKeyError);
    expect(() => parseKeyring(`bad id:${key}`)).toThrow(SecretsKeyError);
    expect(() => parseKeyring(`k1:${key},k1:${key}`)).toThrow(SecretsKeyError);
    expect(() => loadConfig({ SECRETS_KEY: 'k1:nope' })).toThrow(ConfigError);
    expect(loadConfig({ SECRETS_KEY: `k1:${key}` }).secretsKey).toBe(`k1:${key}`);
  });
});

describe('the key file of the embedded default', () => {
  it('is generated once in DATA_DIR, readable by its owner only, and read back on the next start', () => {
    const dataDir = tempDir('crm-secrets-');
    const first = loadKeyring({ secretsKey: undefined, dataDir });
    expect(first.source).toBe(join(dataDir, KEY_FILE_NAME));
    expect(statSync(first.source).mode & 0o777).toBe(0o600);
    const again = loadKeyring({ secretsKey: undefined, dataDir });
    expect(again.keyring.currentId).toBe(first.keyring.currentId);
    expect(readFileSync(first.source, 'utf8').trim()).toMatch(/^k[0-9a-f]{8}:/);
    // SECRETS_KEY wins over the file.
    const configured = generateKeyringText();
    expect(loadKeyring({ secretsKey: configured, dataDir }).source).toBe('SECRETS_KEY');
  });
});

describe('sealing', () => {
  it('opens with the same key and context only', () => {
    const ring = parseKeyring(generateKeyringText());
    const sealed = seal(ring, 'whsec_abc', 'row/1');
    expect(sealed.ciphertext).not.toContain('whsec_abc');
    expect(open(ring, sealed, 'row/1')).toBe('whsec_abc');
    expect(() => open(ring, sealed, 'row/2')).toThrow(SecretsKeyError);
    expect(() => open(parseKeyring(generateKeyringText()), sealed, 'row/1')).toThrow(SecretsKeyError);
  });
});
