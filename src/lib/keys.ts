// Machine keys of properties, funnel stages and sub-origins (decisions §6), and the key a stage derives from its name.

export const KEY_PATTERN = '^[a-z][a-z0-9_]{0,63}$';
const KEY_MAX = 64;

/** `Qualified Lead!` -> `qualified_lead`; `Ação 2` -> `acao_2`; a name with no letters or digits -> `stage`. */
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
