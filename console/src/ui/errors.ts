// The one form helper's core (style.md, the console): the API is the one source of rules, so a refusal is shown,
// never re-checked. A 422's issues go to the field their `loc` names; a 409's (or other) code becomes a sentence.
import { ApiError, ConnectionError, KEY_PATTERN, type ValidationIssue } from '@crm-messaging/sdk';

export interface ShownError {
  /** Message per field, keyed by the `loc` after `body` joined with dots (`email`, `properties.plan`). */
  fields: Record<string, string>;
  /** What belongs to the form as a whole (a 409's sentence, a 422 without a known field, a network failure). */
  message: string | undefined;
}

const SENTENCES: Record<string, string> = {
  duplicate_contact: 'Another contact already has this email or phone.',
  duplicate_key: 'That key is already taken.',
  duplicate: 'This is already taken: choose another.',
  duplicate_user: 'A user with this email already exists.',
  team_limit: 'An organization has at most 100 teams: delete one first.',
  canned_response_limit: 'An organization has at most 1,000 canned responses: delete one first.',
  invalid_credentials: 'The email or password is not right.',
  too_many_sign_in_attempts: 'Too many failed sign-ins for this email. Wait a few minutes and try again.',
  sign_in_link_expired: 'This sign-in link was used already or has expired. Ask an admin for a new one.',
  csrf_failed: 'The page is out of date. Reload it and try again.',
  session_required: 'Your session has ended. Sign in again.',
  last_admin: 'An organization keeps at least one admin.',
  // Not the sign-in lockout's words (too_many_sign_in_attempts): the budget of a second was spent (D239).
  rate_limited: 'The server is busy with many requests from you at once. Wait a second and try again.',
  forbidden_for_role: 'Your role does not allow this. Ask an admin.',
  not_found: 'It no longer exists: it may have been deleted.',
  conversation_window_closed:
    'The 24-hour window has closed: the contact has not written in the last 24 hours. Send a template instead.',
  channel_unavailable: 'The number of this conversation is no longer connected.',
  // decisions §19/§20: assigning to the assistant, drafts and the assistant's try-it call.
  ai_disabled: 'The AI assistant is disabled. An admin can enable it in Settings → AI assistant.',
  ai_provider_error:
    'The AI model did not answer, or answered something else. Try again, or check the provider in Settings → AI assistant.',
  contact_opted_out: 'The contact opted out of marketing messages.',
  messaging_limit_exceeded:
    'The 24-hour messaging limit is reached: no more conversations can be started with a template until it frees up.',
  messaging_insufficient_balance: 'The messaging balance is too low for this send. An admin can add funds in Settings.',
  template_not_sendable: 'This template cannot be sent (it is not approved, or lacks what it needs).',
  missing_variables: 'Some variables of the template are missing.',
  unknown_variables: 'Some variables are not in the template.',
  broadcast_not_cancellable: 'This broadcast has finished and can no longer be cancelled.',
  broadcast_not_pausable: 'This broadcast is not running or waiting, so it cannot be paused.',
  broadcast_not_resumable: 'This broadcast is not paused, so it cannot be resumed.',
  channel_id_required: 'Choose the number to send from: the messaging account has more than one.',
  invalid_channel: 'That number cannot send this template: choose another one.',
  unknown_url_suffixes: 'Some link suffixes are not in the template.',
  idempotency_key_reused: 'This request was already sent with other values. Reload the page and try again.',
  nothing_to_retry: 'There are no failures to retry.',
  idempotency_key_in_flight: 'The same request is still being processed.',
  stage_in_use: 'Contacts are still in this stage: move them first.',
  initial_stage_required: 'The initial stage cannot be removed.',
  api_key_required: 'This operation needs an API key.',
  scale_plan_required: 'This needs the Scale plan.',
  trial_expired: 'The trial has ended.',
  subscription_required: 'The subscription is not active.',
  internal_error: 'Something went wrong on our side. Try again.',
  media_fetch_failed: 'The file at this address could not be fetched',
  media_too_large: 'The file at this address is too large to send',
  media_type_mismatch: 'The file at this address is not of the kind chosen',
};

/** A sentence for an API code: the known ones in words, others as their code made readable. */
export function sentenceFor(code: string): string {
  const known = SENTENCES[code];
  if (known) return /[.!?]$/.test(known) ? known : `${known}.`;
  return `${code.replaceAll('_', ' ').replace(/^./, (c) => c.toUpperCase())}.`;
}

export function showError(error: unknown): ShownError {
  if (error instanceof ApiError) {
    if (Array.isArray(error.detail)) {
      const fields: Record<string, string> = {};
      const loose: string[] = [];
      for (const issue of error.detail) {
        const [where, ...path] = issue.loc;
        const sentence = issueSentence(issue);
        if (where === 'body' && path.length > 0) fields[path.join('.')] ??= sentence;
        else loose.push(sentence);
      }
      return { fields, message: loose.length > 0 ? loose.join(' ') : undefined };
    }
    // A code that names the template's tokens (`missing_variables`, `unknown_variables`) marks each one's field.
    const fields: Record<string, string> = {};
    const tokens = typeof error.detail === 'object' ? (error.detail as { tokens?: unknown }).tokens : undefined;
    if (Array.isArray(tokens))
      for (const token of tokens) if (typeof token === 'string') fields[`variables.${token}`] = sentenceFor(error.code);
    // A code that names its field (decisions §19's 409 `{code: "duplicate", field}`) is shown at that field alone.
    const field = typeof error.detail === 'object' ? (error.detail as { field?: unknown }).field : undefined;
    if (typeof field === 'string' && field) return { fields: { [field]: sentenceFor(error.code) }, message: undefined };
    const suffix = error.status === 429 ? retryAfter(error.headers.get('retry-after')) : '';
    // A refusal that gives its reason (a media URL the server could not fetch: D240) says it.
    const reason = typeof error.detail === 'object' ? (error.detail as { reason?: unknown }).reason : undefined;
    const sentence = sentenceFor(error.code);
    if (typeof reason === 'string' && reason !== '')
      return { fields, message: `${sentence.replace(/\.$/, '')}: ${reason.replace(/\.?$/, '.')}${suffix}` };
    return { fields, message: `${sentence}${suffix}` };
  }
  if (error instanceof ConnectionError) return { fields: {}, message: 'The server cannot be reached. Try again.' };
  return { fields: {}, message: error instanceof Error ? error.message : String(error) };
}

const plural = (count: unknown, one: string) => `${count} ${one}${count === 1 ? '' : 's'}`;

/**
 * A 422 issue as a sentence a person reads (D242): by its `type` and `ctx`, never a schema's wording or a regular
 * expression. The one place for it: forms, tables and the import all show these.
 */
export function issueSentence(issue: ValidationIssue): string {
  const ctx = issue.ctx ?? {};
  switch (issue.type) {
    case 'missing':
      return 'This is required.';
    case 'extra_forbidden':
      return 'This field is not expected here.';
    case 'string_pattern_mismatch':
      return ctx.pattern === KEY_PATTERN
        ? 'Start with a lower-case letter, then use only lower-case letters, digits and _ (at most 64 characters).'
        : 'This is not in the expected form.';
    case 'string_too_short':
      return ctx.min_length === 1 ? 'This cannot be empty.' : `Use at least ${plural(ctx.min_length, 'character')}.`;
    case 'string_too_long':
      return `Use at most ${plural(ctx.max_length, 'character')}.`;
    case 'greater_than_equal':
      return `Use a number of ${ctx.ge} or more.`;
    case 'less_than_equal':
      return `Use a number of ${ctx.le} or less.`;
    case 'greater_than':
      return `Use a number greater than ${ctx.gt}.`;
    case 'less_than':
      return `Use a number less than ${ctx.lt}.`;
    case 'too_short':
      return `Give at least ${plural(ctx.min_length, 'item')}.`;
    case 'too_long':
      return `Give at most ${plural(ctx.max_length, 'item')}.`;
    case 'enum':
      return 'Choose one of the offered values.';
    case 'date_from_datetime_parsing':
      return 'Enter a date (YYYY-MM-DD).';
    case 'datetime_from_date_parsing':
      return 'Enter a date and a time.';
    case 'url_parsing':
      return 'Enter a full web address, starting with https://.';
    case 'int_parsing':
    case 'int_type':
      return 'Enter a whole number.';
    case 'float_parsing':
    case 'float_type':
      return 'Enter a number.';
    case 'bool_parsing':
    case 'bool_type':
      return 'Choose yes or no.';
    case 'string_type':
      return 'Enter text here.';
    default:
      if (/valid email/i.test(issue.msg)) return 'Enter a valid email address.';
      // A schema's "Input should be an ISO 3166-1 … code" reads as advice.
      if (/^Input should be /.test(issue.msg))
        return `${issue.msg.replace(/^Input should be /, 'Use ').replace(/\.?$/, '.')}`;
      // The server's own checks already speak in sentences (a duplicate option, an unknown placeholder): kept.
      return /^[A-Z]/.test(issue.msg)
        ? issue.msg.replace(/\.?$/, '.')
        : `${issue.msg.replace(/^./, (c) => c.toUpperCase())}.`;
  }
}

function retryAfter(value: string | null): string {
  return value && /^\d+$/.test(value) ? ` (retry in ${value} s)` : '';
}

/** A delivery failure's code in words (recipients and messages, D242); the code itself is kept beside them. */
const FAILURE_WORDS: Record<string, string> = {
  not_on_network: 'Not on the chat network',
  platform_error: 'The messaging platform refused it',
  opted_out: 'The contact opted out',
  invalid_channel: 'The number cannot send this template',
  handoff_unconfirmed: 'The platform never confirmed it',
  missing_variables: 'Variables were missing',
  rate_limited: 'The platform was too busy',
  payment_required: 'The platform asked for payment',
  invalid_parameter: 'The platform refused a value',
  template_paused: 'The template was paused',
  window_closed: 'The 24-hour window had closed',
  marketing_cap: 'The contact reached the platform’s cap on marketing messages',
  cancelled: 'The broadcast was cancelled',
};

/** "Not on the chat network (not_on_network)": words, then the code (a `code:detail` keeps its detail). */
export function failureReason(code: string): string {
  const [head = code] = code.split(':');
  const words = FAILURE_WORDS[head] ?? `${head.replaceAll('_', ' ').replace(/^./, (c) => c.toUpperCase())}`;
  return `${words} (${code})`;
}
