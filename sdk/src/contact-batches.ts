// Loading contacts from a CSV in batches (decisions §12), shared by the CLI's `crm contacts import` and the
// console's import page: a refused batch names the items to set aside and why, in sentences (D232). The rows
// become items in contact-csv.ts.
import { ApiError, type ValidationIssue } from './errors.ts';

/** What a contact field must be, said to a person (the server's 422 speaks of schemas and patterns). */
const FIELD_RULES: Record<string, string> = {
  email: 'is not an email address',
  phone: 'is not a phone number in international format: + then the country code and number, such as +5215512345678',
  country: 'is not a two-letter country code (ISO 3166-1, such as MX or US)',
  social_handle: 'is not a social handle: up to 30 letters, digits, dots and underscores',
};

/** One issue of a 422 about a batch item's `field`, as a sentence (`field: …`). */
export function issueSentence(field: string, issue: Pick<ValidationIssue, 'msg' | 'type' | 'input' | 'ctx'>): string {
  const shown = typeof issue.input === 'string' ? `"${issue.input}" ` : '';
  const ctx = (issue.ctx ?? {}) as Record<string, unknown>;
  const rule = FIELD_RULES[field];
  let sentence: string;
  if (issue.type === 'missing') sentence = 'required';
  else if (issue.type === 'extra_forbidden') sentence = 'not a contact field';
  else if (issue.type === 'string_too_long') sentence = `longer than ${ctx.max_length ?? 'allowed'} characters`;
  else if (issue.type === 'string_too_short') sentence = 'empty';
  else if (issue.type === 'enum' && typeof ctx.expected === 'string')
    sentence = `${shown}is not one of ${ctx.expected.replaceAll("'", '')}`;
  else if (rule && (issue.type === 'string_pattern_mismatch' || issue.type === 'value_error'))
    sentence = `${shown}${rule}`;
  else if (issue.type === 'string_pattern_mismatch') sentence = `${shown}is not in the expected form`;
  else sentence = `${issue.msg.charAt(0).toLowerCase()}${issue.msg.slice(1)}`;
  return field ? `${field}: ${sentence}` : sentence;
}

/** Where a batch refusal points: the item's index, from `loc` or `detail.index`; undefined for another error. */
export function refusedItemIndex(error: unknown): number | undefined {
  if (!(error instanceof ApiError)) return undefined;
  const detail = error.detail as unknown;
  if (Array.isArray(detail)) {
    const loc = (detail[0] as { loc?: unknown[] } | undefined)?.loc;
    return loc?.[0] === 'body' && loc[1] === 'items' && typeof loc[2] === 'number' ? loc[2] : undefined;
  }
  const index = (detail as { index?: unknown } | null)?.index;
  return typeof index === 'number' ? index : undefined;
}

/** Why a batch's item was refused, in one line (`email: …; phone: …`, or the error's detail). */
export function refusalReason(error: ApiError): string {
  const detail = error.detail as unknown;
  if (Array.isArray(detail)) {
    return (detail as ValidationIssue[]).map((issue) => issueSentence(issue.loc.slice(3).join('.'), issue)).join('; ');
  }
  return JSON.stringify(detail);
}

/**
 * Every item a batch refusal names, with that item's own reasons: a 422 lists issues of any number of items
 * (`loc` ["body","items",index,…]); a 409 names one (`detail.index`). Undefined when the refusal names no item.
 */
export function refusedItems(error: unknown): Map<number, string[]> | undefined {
  if (!(error instanceof ApiError)) return undefined;
  const detail = error.detail as unknown;
  const items = new Map<number, string[]>();
  if (Array.isArray(detail)) {
    for (const issue of detail as { loc?: unknown[]; msg: string }[]) {
      const loc = issue.loc ?? [];
      if (loc[0] !== 'body' || loc[1] !== 'items' || typeof loc[2] !== 'number') return undefined;
      const field = loc.slice(3).join('.');
      items.set(loc[2], [...(items.get(loc[2]) ?? []), issueSentence(field, issue as ValidationIssue)]);
    }
    return items.size > 0 ? items : undefined;
  }
  const index = (detail as { index?: unknown } | null)?.index;
  if (typeof index !== 'number') return undefined;
  const { code, field, conflicting_contact_id: holder } = detail as Record<string, unknown>;
  const reason =
    code === 'duplicate_contact' && typeof field === 'string'
      ? `${field}: another contact has this ${field.replaceAll('_', ' ')} already${typeof holder === 'string' ? ` (${holder})` : ''}`
      : typeof code === 'string'
        ? `${typeof field === 'string' ? `${field}: ` : ''}${code.replaceAll('_', ' ')}`
        : JSON.stringify(detail);
  return new Map([[index, [reason]]]);
}
