// Bearer secrets other than API keys (console sessions, sign-in links): a prefix and 256 random bits, stored only as
// SHA-256 hashes, like API keys (decisions §4).
import { randomBytes } from 'node:crypto';
import { hashApiKey } from './api-keys.ts';

export const hashSecretToken = hashApiKey;

export function newSecretToken(prefix: string): { token: string; hash: string } {
  const token = `${prefix}${randomBytes(32).toString('base64url')}`;
  return { token, hash: hashSecretToken(token) };
}
