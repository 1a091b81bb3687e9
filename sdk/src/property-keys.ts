// The machine keys of properties, their options, funnel stages and sub-origins (decisions §6): the server's one rule,
// kept here (the SDK builds alone; the server compiles sdk/src too) so that the server, the CLI and the console
// derive the same key from the same name (D328).
import { propertyKinds } from './operations.ts';

export const KEY_PATTERN = '^[a-z][a-z0-9_]{0,63}$';
const KEY_MAX = 64;

/** A kind of custom property, as the server lists them (`PropertyInput.kind`). */
export type PropertyKind = (typeof propertyKinds)[number];
export { propertyKinds };

/** Kinds whose values are option keys: they need at least one option (decisions §6). */
export const OPTION_KINDS: readonly PropertyKind[] = ['RADIO', 'DROPDOWN', 'MULTI_SELECT'];

/**
 * `Qualified Lead!` -> `qualified_lead`; `Ação 2` -> `acao_2`; a name with no letters or digits -> `fallback`; a
 * name that starts with a digit -> `fallback_…` (`2 doors`, option -> `option_2_doors`).
 */
export function keyFromName(name: string, fallback = 'stage'): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  const base = slug === '' ? fallback : /^[a-z]/.test(slug) ? slug : `${fallback}_${slug}`;
  return base.slice(0, KEY_MAX).replace(/_+$/, '');
}

/** The n-th alternative of a derived key that is taken: `lead`, `lead_2`, `lead_3`, ... within 64 characters. */
export function keyVariant(base: string, n: number): string {
  if (n <= 1) return base;
  const suffix = `_${n}`;
  return `${base.slice(0, KEY_MAX - suffix.length).replace(/_+$/, '')}${suffix}`;
}
