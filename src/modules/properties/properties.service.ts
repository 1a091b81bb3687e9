// Custom property definitions: key rules, option kinds, MONEY currency, archive, reorder, delete (decisions §6).
import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../../db/errors.ts';
import type { DB } from '../../db/schema.ts';
import { ApiError, notFound, validationError } from '../../http/errors.ts';
import { withArticle } from '../../lib/article.ts';
import type { Clock } from '../../lib/clock.ts';
import { newId } from '../../lib/ids.ts';
import { applyMoves } from '../../lib/reorder.ts';
import * as repo from './properties.repo.ts';
import {
  OPTION_KINDS,
  type Property,
  type PropertyInput,
  type PropertyKind,
  type PropertyPatch,
  type PropertyReorder,
} from './properties.schemas.ts';

const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

export function toProperty(row: repo.PropertyRow): Property {
  return {
    id: row.id,
    key: row.key,
    label: row.label,
    description: row.description,
    kind: row.kind as PropertyKind,
    options: row.options,
    currency: row.currency,
    required: row.required,
    order_idx: row.order_idx,
    archived_at: row.archived_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** Options and currency must fit the kind: option kinds need options; MONEY needs an ISO 4217 currency. */
function checkShape(kind: PropertyKind, options: PropertyInput['options'], currency: string | null | undefined) {
  const optionKind = OPTION_KINDS.includes(kind);
  if (optionKind && (!options || options.length === 0)) {
    throw validationError(
      ['body', 'options'],
      `${withArticle(kind, { capital: true })} property needs at least one option`,
      'missing',
      {
        input: options,
      },
    );
  }
  if (!optionKind && options && options.length > 0) {
    throw validationError(
      ['body', 'options'],
      `${withArticle(kind, { capital: true })} property takes no options`,
      'value_error',
      {
        input: options,
      },
    );
  }
  const seen = new Set<string>();
  for (const [index, option] of (options ?? []).entries()) {
    if (seen.has(option.key)) {
      throw validationError(['body', 'options', index, 'key'], 'Duplicate option key', 'value_error', {
        input: option.key,
      });
    }
    seen.add(option.key);
  }
  if (kind === 'MONEY') {
    if (currency === undefined || currency === null) {
      throw validationError(['body', 'currency'], 'A MONEY property needs a currency', 'missing');
    }
    if (!CURRENCIES.has(currency)) {
      throw validationError(['body', 'currency'], 'Input should be an ISO 4217 currency code', 'value_error', {
        input: currency,
      });
    }
  } else if (currency !== undefined && currency !== null) {
    throw validationError(['body', 'currency'], 'Only a MONEY property has a currency', 'value_error', {
      input: currency,
    });
  }
}

function duplicateKey(key: string, id: string | undefined) {
  return new ApiError(409, { code: 'duplicate_key', key, id: id ?? null });
}

export function createPropertiesService(deps: { db: Kysely<DB>; clock: Clock }) {
  const { db, clock } = deps;

  async function get(orgId: string, id: string): Promise<Property> {
    const row = await repo.findProperty(db, orgId, id);
    if (!row) throw notFound();
    return toProperty(row);
  }

  return {
    get,

    async list(orgId: string) {
      return { items: (await repo.listProperties(db, orgId)).map(toProperty) };
    },

    async create(orgId: string, input: PropertyInput): Promise<Property> {
      checkShape(input.kind, input.options, input.currency);
      const now = clock.now();
      try {
        const row = await repo.insertProperty(db, {
          org_id: orgId,
          id: newId('prop'),
          key: input.key,
          label: input.label,
          description: input.description ?? '',
          kind: input.kind,
          options: JSON.stringify(input.options ?? []),
          currency: input.currency ?? null,
          required: input.required ?? false,
          created_at: now,
          updated_at: now,
        });
        return toProperty(row);
      } catch (error) {
        if (!isUniqueViolation(error, 'crm_properties_key_uq')) throw error;
        throw duplicateKey(input.key, (await repo.findPropertyByKey(db, orgId, input.key))?.id);
      }
    },

    async update(orgId: string, id: string, patch: PropertyPatch): Promise<Property> {
      const current = await repo.findProperty(db, orgId, id);
      if (!current) throw notFound();
      const kind = current.kind as PropertyKind;
      // contract (decisions §6): a property's kind cannot change.
      if (patch.kind !== undefined && patch.kind !== kind) {
        throw validationError(['body', 'kind'], 'The kind of a property cannot change', 'value_error', {
          input: patch.kind,
          ctx: { kind },
        });
      }
      const options = patch.options ?? (OPTION_KINDS.includes(kind) ? current.options : undefined);
      const currency = patch.currency !== undefined ? patch.currency : current.currency;
      checkShape(kind, options, currency);
      const now = clock.now();
      const row = await repo.updateProperty(db, orgId, id, {
        ...(patch.label !== undefined ? { label: patch.label } : {}),
        ...(patch.description !== undefined ? { description: patch.description } : {}),
        ...(patch.options !== undefined ? { options: JSON.stringify(patch.options) } : {}),
        ...(patch.currency !== undefined ? { currency: patch.currency } : {}),
        ...(patch.required !== undefined ? { required: patch.required } : {}),
        // Archiving twice keeps the first time.
        ...(patch.archived === true && current.archived_at === null ? { archived_at: now } : {}),
        ...(patch.archived === false ? { archived_at: null } : {}),
        updated_at: now,
      });
      if (!row) throw notFound();
      return toProperty(row);
    },

    async reorder(orgId: string, input: PropertyReorder) {
      const moves = input.items.map((item) => ({ id: item.property_id, order_idx: item.order_idx }));
      checkDistinct(
        moves.map((move) => move.id),
        'property_id',
      );
      return db.transaction().execute(async (trx) => {
        const current = (await repo.lockOrder(trx, orgId)).map((row) => row.id);
        const known = new Set(current);
        const missing = moves.map((move) => move.id).filter((moveId) => !known.has(moveId));
        if (missing.length > 0) {
          throw new ApiError(422, {
            code: 'unknown_ids',
            reason: 'Some property ids are not properties of this organization',
            missing_ids: missing,
          });
        }
        await repo.writeOrder(trx, orgId, applyMoves(current, moves), clock.now());
        return { items: (await repo.listProperties(trx, orgId)).map(toProperty) };
      });
    },

    async remove(orgId: string, id: string): Promise<void> {
      // Its values leave every contact with it (foreign key, on delete cascade).
      if (!(await repo.deleteProperty(db, orgId, id))) throw notFound();
    },
  };
}

export type PropertiesService = ReturnType<typeof createPropertiesService>;

/** A reorder names each item once. */
export function checkDistinct(ids: string[], field: string): void {
  const seen = new Set<string>();
  for (const [index, id] of ids.entries()) {
    if (seen.has(id)) {
      throw validationError(['body', 'items', index, field], 'Each item may appear only once', 'value_error', {
        input: id,
      });
    }
    seen.add(id);
  }
}
