// decisions §7, §15 and §16 give each operation's checks in order, the first failure answering: a template, a
// conversation or a channel is checked before the body (or before a later part of it). Such a route keeps its body
// schema (the OpenAPI document, the SDK's types, D224) but lets every body through its validator; its service runs
// the schema at the body's place in the list and answers the same 422 issues the route's validator would have.
import type { Ajv } from 'ajv';
import { ApiError } from './api-error.ts';
import type { ValidationIssue } from './schemas.ts';
import { CHECKED_IN_ORDER, issuesAt, makeAjv } from './validation.ts';

export type Loc = readonly (string | number)[];
/** Where an issue is and what it is (`type`, as in the 422 item). */
type Where = (loc: Loc, type: string) => boolean;

/** The body schema as the route declares it: documented whole, validated by the service (`orderedBody`). */
export function checkedInOrder<T extends object>(schema: T): T {
  return { ...schema, [CHECKED_IN_ORDER]: true };
}

let ajv: Ajv | undefined;

/** A body's validation, run where the ordered checks place it. */
export interface OrderedBody {
  /** Whether no issue is at a location `where` selects. */
  valid(where: Where): boolean;
  /** Answers the body's 422 (every issue, as the route's validator lists them) when an issue is where `where` says. */
  check(where: Where): void;
}

/** The body's checker for a schema (compiled at its first use, with the route validators' options). */
export function orderedBody(schema: object): (body: unknown) => OrderedBody {
  let validate: ReturnType<Ajv['compile']> | undefined;
  return (body) => {
    ajv ??= makeAjv(false);
    validate ??= ajv.compile(schema);
    const issues: ValidationIssue[] = validate(body) ? [] : issuesAt(validate.errors ?? [], 'body', body);
    const valid = (where: Where) => !issues.some((issue) => where(issue.loc, issue.type));
    return {
      valid,
      check(where) {
        if (!valid(where)) throw new ApiError(422, issues);
      },
    };
  };
}

/** Selects the locations at or under `prefix` (`under('body', 'channel_id')`). */
export const under =
  (...prefix: (string | number)[]) =>
  (loc: Loc) =>
    prefix.every((part, index) => loc[index] === part);

/** Selects every location: the rest of the body. */
export const anywhere = () => true;
