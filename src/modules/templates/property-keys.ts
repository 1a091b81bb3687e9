// Named placeholders equal to a live custom property key resolve from the contact (send requirements, sends).
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { liveKeys } from '../properties/properties.repo.ts';

/** The organization's custom property keys (named placeholders that resolve from a contact). */
export type PropertyKeysSource = (db: Kysely<DB>, orgId: string) => Promise<readonly string[]>;

export const livePropertyKeys: PropertyKeysSource = liveKeys;

/** No placeholder resolves from a custom property. */
export const noPropertyKeys: PropertyKeysSource = async () => [];
