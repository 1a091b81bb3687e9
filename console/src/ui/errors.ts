// The one form helper's core (style.md, the console): the API is the one source of rules, so a refusal is shown,
// never re-checked. A 422's issues go to the field their `loc` names; a 409's (or other) code becomes a sentence.
import { ApiError, ConnectionError } from '@crm-messaging/sdk';

export interface ShownError {
  /** Message per field, keyed by the `loc` after `body` joined with dots (`email`, `properties.plan`). */
  fields: Record<string, string>;
  /** What belongs to the form as a whole (a 409's sentence, a 422 without a known field, a network failure). */
  message: string | undefined;
}

const SENTENCES: Record<string, string> = {
  duplicate_contact: 'Another contact already has this email or phone.',
  duplicate_key: 'That key is already taken.',
  invalid_credentials: 'The email or password is not right.',
  too_many_sign_in_attempts: 'Too many failed sign-ins for this email. Wait a few minutes and try again.',
  sign_in_link_expired: 'This sign-in link was used already or has expired. Ask an admin for a new one.',
  csrf_failed: 'The page is out of date. Reload it and try again.',
  session_required: 'Your session has ended. Sign in again.',
  last_admin: 'An organization keeps at least one admin.',
  rate_limited: 'Too many attempts. Wait a moment and try again.',
  forbidden_for_role: 'Your role does not allow this. Ask an admin.',
  not_found: 'It no longer exists: it may have been deleted.',
  conversation_window_closed:
    'The 24-hour window has closed: the contact has not written in the last 24 hours. Send a template instead.',
  channel_unavailable: 'The number of this conversation is no longer connected.',
  // decisions §20: drafts and the assistant's try-it call.
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
};

/** A sentence for an API code: the known ones in words, others as their code made readable. */
export function sentenceFor(code: string): string {
  return SENTENCES[code] ?? `${code.replaceAll('_', ' ').replace(/^./, (c) => c.toUpperCase())}.`;
}

export function showError(error: unknown): ShownError {
  if (error instanceof ApiError) {
    if (Array.isArray(error.detail)) {
      const fields: Record<string, string> = {};
      const loose: string[] = [];
      for (const issue of error.detail) {
        const [where, ...path] = issue.loc;
        if (where === 'body' && path.length > 0) fields[path.join('.')] ??= issue.msg;
        else loose.push(issue.msg);
      }
      return { fields, message: loose.length > 0 ? loose.join(' ') : undefined };
    }
    // A code that names the template's tokens (`missing_variables`, `unknown_variables`) marks each one's field.
    const fields: Record<string, string> = {};
    const tokens = typeof error.detail === 'object' ? (error.detail as { tokens?: unknown }).tokens : undefined;
    if (Array.isArray(tokens))
      for (const token of tokens) if (typeof token === 'string') fields[`variables.${token}`] = sentenceFor(error.code);
    const suffix = error.status === 429 ? retryAfter(error.headers.get('retry-after')) : '';
    return { fields, message: `${sentenceFor(error.code)}${suffix}` };
  }
  if (error instanceof ConnectionError) return { fields: {}, message: 'The server cannot be reached. Try again.' };
  return { fields: {}, message: error instanceof Error ? error.message : String(error) };
}

function retryAfter(value: string | null): string {
  return value && /^\d+$/.test(value) ? ` (retry in ${value} s)` : '';
}
