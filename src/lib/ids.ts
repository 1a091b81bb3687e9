// Identifiers: a short type prefix and a ULID (time-ordered, 128 bits), e.g. `ct_01JD3Q...`.
import { monotonicFactory } from 'ulid';

const next = monotonicFactory();

export type IdPrefix = 'org' | 'key' | 'ma' | 'ch' | string;

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${next().toLowerCase()}`;
}
