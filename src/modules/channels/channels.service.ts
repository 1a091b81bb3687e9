// The organization's connected numbers as the public API shows them.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { listLivePhones } from './channels.repo.ts';

export function createChannelsService(db: Kysely<DB>) {
  return {
    async livePhones(orgId: string) {
      return { items: await listLivePhones(db, orgId) };
    },
  };
}

export type ChannelsService = ReturnType<typeof createChannelsService>;
