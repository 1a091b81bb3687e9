// Endpoint signing secrets at rest (D148): `secret` and `previous_secret` are stored sealed with
// AES-256-GCM (lib/secrets-box.ts) under the key named by `secrets_key_id`, each bound to its row and column; a row
// whose `secrets_key_id` is null still holds them in clear (written before migration 0018) until resealed.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { type Keyring, open, seal } from '../../lib/secrets-box.ts';

interface StoredSecrets {
  secret: string;
  previous_secret: string | null;
  secrets_key_id: string | null;
}

const context = (orgId: string, endpointId: string, column: 'secret' | 'previous_secret') =>
  `webhook_endpoints/${orgId}/${endpointId}/${column}`;

/** The columns to store for an endpoint's secrets, sealed under the keyring's current key. */
export function sealSecrets(
  keyring: Keyring,
  orgId: string,
  endpointId: string,
  secrets: { secret: string; previous: string | null },
): StoredSecrets {
  const current = seal(keyring, secrets.secret, context(orgId, endpointId, 'secret'));
  return {
    secret: current.ciphertext,
    previous_secret:
      secrets.previous === null
        ? null
        : seal(keyring, secrets.previous, context(orgId, endpointId, 'previous_secret')).ciphertext,
    secrets_key_id: current.keyId,
  };
}

/** An endpoint's secrets in clear. Throws SecretsKeyError when its key is not in the keyring. */
export function openSecrets(
  keyring: Keyring,
  orgId: string,
  endpointId: string,
  stored: StoredSecrets,
): { secret: string; previous: string | null } {
  const keyId = stored.secrets_key_id;
  if (keyId === null) return { secret: stored.secret, previous: stored.previous_secret };
  return {
    secret: open(keyring, { ciphertext: stored.secret, keyId }, context(orgId, endpointId, 'secret')),
    previous:
      stored.previous_secret === null
        ? null
        : open(keyring, { ciphertext: stored.previous_secret, keyId }, context(orgId, endpointId, 'previous_secret')),
  };
}

/**
 * Seals again, under the keyring's current key, every endpoint whose secrets are in clear or under another key
 * (the migration of rows written before 0018, and a key rotation), a batch at a time; answers how many. Each update
 * applies only if the row is as read, so a concurrent rotation is never overwritten. Run at every start.
 */
export async function resealWebhookSecrets(db: Kysely<DB>, keyring: Keyring, batch = 500): Promise<number> {
  let total = 0;
  for (;;) {
    const rows = await db
      .selectFrom('webhook_endpoints')
      .select(['org_id', 'id', 'secret', 'previous_secret', 'secrets_key_id'])
      .where((eb) => eb.or([eb('secrets_key_id', 'is', null), eb('secrets_key_id', '!=', keyring.currentId)]))
      .limit(batch)
      .execute();
    if (rows.length === 0) return total;
    let changed = 0;
    for (const row of rows) {
      const sealed = sealSecrets(keyring, row.org_id, row.id, openSecrets(keyring, row.org_id, row.id, row));
      const result = await db
        .updateTable('webhook_endpoints')
        .set(sealed)
        .where('org_id', '=', row.org_id)
        .where('id', '=', row.id)
        .where('secret', '=', row.secret)
        .executeTakeFirst();
      changed += Number(result.numUpdatedRows);
    }
    total += changed;
    // Rows that changed under us are read again in the next batch; none changing means someone else is at it.
    if (changed === 0) return total;
  }
}
