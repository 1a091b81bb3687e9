// Row types of every table, as Kysely sees them. Tenant tables lead their keys with org_id.
import type { ColumnType, Generated, GeneratedAlways } from 'kysely';
import type { AutomationTables } from './schema-automation.ts';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
type Json<T> = ColumnType<T, string, string>;

export interface OrganizationsTable {
  id: string;
  name: string;
  plan: string;
  trial: boolean;
  trial_ends_at: NullableTimestamp;
  subscription_status: string;
  timezone: string;
  language: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ApiKeysTable {
  org_id: string;
  id: string;
  name: string | null;
  key_hash: string;
  display_prefix: string;
  /** decisions §18: `["*"]` or a non-empty list of scopes (src/http/scopes.ts). */
  scopes: ColumnType<string[], string[] | undefined, string[]>;
  expires_at: NullableTimestamp;
  last_used_at: NullableTimestamp;
  created_at: Timestamp;
  revoked_at: NullableTimestamp;
}

export interface MessagingAccountsTable {
  org_id: string;
  id: string;
  business_account_id: string;
  display_name: string | null;
  balance: ColumnType<number, number | string, number | string>;
  prices: Json<Record<string, number>>;
  messaging_limit_24h: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ChannelsTable {
  org_id: string;
  id: string;
  account_id: string;
  phone: string;
  display_name: string | null;
  phone_number_id: string;
  status: string;
  created_at: Timestamp;
  removed_at: NullableTimestamp;
  /** decisions §16: the platform's throughput errors slow the number down until then (migration 0014). */
  slowed_until: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export interface ContactsTable {
  org_id: string;
  id: string;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  phone: string | null;
  country: string | null;
  city: string | null;
  social_handle: string | null;
  inbox_handle: string | null;
  messaging_username: string | null;
  origin: string | null;
  sub_origin_id: string | null;
  messaging_status: string;
  funnel_stage_id: string | null;
  owner_id: string | null;
  last_contacted_at: NullableTimestamp;
  /** decisions §14 (migration 0010). */
  opted_out: ColumnType<boolean, boolean | undefined, boolean>;
  opted_out_at: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: NullableTimestamp;
  // Kept by the database (0003-crm): sort and search keys, and the organization's contact version of the
  // transaction that last moved the contact, for cursor walks (D315, migration 0045).
  full_name: GeneratedAlways<string | null>;
  name_sort: GeneratedAlways<string | null>;
  city_sort: GeneratedAlways<string | null>;
  search_text: GeneratedAlways<string>;
  version: Generated<string>;
}

export interface CrmPropertiesTable {
  org_id: string;
  id: string;
  key: string;
  label: string;
  description: string;
  kind: string;
  options: Json<{ key: string; label: string }[]>;
  currency: string | null;
  required: boolean;
  order_idx: number;
  archived_at: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ContactPropertyValuesTable {
  org_id: string;
  contact_id: string;
  property_id: string;
  value_text: string | null;
  value_number: ColumnType<number | null, number | null, number | null>;
  value_bool: boolean | null;
  value_date: string | null;
  value_json: ColumnType<unknown, string | null, string | null>;
  /** left(value_text, 200), kept by the database for the text value index (migration 0006). */
  value_key: GeneratedAlways<string | null>;
}

export interface FunnelStagesTable {
  org_id: string;
  id: string;
  name: string;
  key: string;
  description: string;
  order_idx: number;
  is_initial: boolean;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface SubOriginsTable {
  org_id: string;
  id: string;
  key: string;
  label: string;
  origin: string;
  created_at: Timestamp;
}

export interface ContactSortVersionsTable {
  org_id: string;
  contact_id: string;
  version: string;
  replaced: string;
  replaced_at: Timestamp;
  updated_at: Timestamp;
  name_sort: string | null;
  country: string | null;
  city_sort: string | null;
  origin: string | null;
}

/** An organization's contact version (D315): the last transaction's number that moved one of its contacts. */
export interface ContactVersionsTable {
  org_id: string;
  version: string;
}

/** The global lookups (D313): a platform id, a key's hash, an email or a token's hash → its organization. */
export interface DirectoryTable {
  kind: DirectoryKind;
  key: string;
  org_id: string;
}

export type DirectoryKind = 'api_key' | 'account' | 'number' | 'email' | 'session' | 'sign_in_link';

export interface TemplatesTable {
  org_id: string;
  id: string;
  account_id: string;
  business_account_id: string;
  platform_template_id: string | null;
  name: string;
  language: string;
  category: string;
  status: string;
  components: Json<Record<string, unknown>[]>;
  parameter_format: string;
  catalog_send_defaults: ColumnType<Record<string, unknown> | null, string | null, string | null>;
  rejected_reason: string | null;
  quality_rating: string | null;
  status_event_at: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: NullableTimestamp;
}

export interface ProcessedWebhookEventsTable {
  org_id: string;
  event_key: string;
  kind: string;
  received_at: Timestamp;
}

export interface ConversationsTable {
  org_id: string;
  id: string;
  contact_id: string;
  channel_id: string;
  last_message_at: Timestamp;
  last_inbound_at: NullableTimestamp;
  unread_count: Generated<number>;
  /** decisions §19 (0037): the conversation's state, owner, team, priority, labels and clocks. */
  status: Generated<'open' | 'pending' | 'snoozed' | 'resolved'>;
  snoozed_until: NullableTimestamp;
  assignee_type: ColumnType<'user' | 'ai' | null, 'user' | 'ai' | null | undefined, 'user' | 'ai' | null>;
  assignee_user_id: ColumnType<string | null, string | null | undefined, string | null>;
  team_id: ColumnType<string | null, string | null | undefined, string | null>;
  priority: Generated<'none' | 'low' | 'medium' | 'high' | 'urgent'>;
  labels: ColumnType<string[], string[] | undefined, string[]>;
  /** The labels in lower case, for the `label` filter (decisions §19: ignoring case). */
  label_keys: ColumnType<string[], string[] | undefined, string[]>;
  waiting_since: NullableTimestamp;
  first_reply_at: NullableTimestamp;
  last_activity_at: Timestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface MessagesTable {
  org_id: string;
  id: string;
  conversation_id: string;
  contact_id: string;
  channel_id: string;
  direction: string;
  sender: string;
  type: string;
  text: string | null;
  template_id: string | null;
  phone: string;
  platform_message_id: string | null;
  /** Null for a note (decisions §19, 0037). */
  status: string | null;
  error: string | null;
  error_message: string | null;
  media: ColumnType<unknown | null, string | null | undefined, string | null>;
  platform_media_id: string | null;
  reply_to: string | null;
  /** decisions §15: the account whose 24-hour limit a template reply outside the window counts against (0019). */
  window_account_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** decisions §19 (0037): the console's person who wrote it, else null; notes are private. */
  author_id: ColumnType<string | null, string | null | undefined, string | null>;
  private: Generated<boolean>;
  /** D292 (0042): when the server received a contact's message (its clock); null for every other message. */
  received_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  created_at: Timestamp;
  sent_at: NullableTimestamp;
  delivered_at: NullableTimestamp;
  read_at: NullableTimestamp;
  failed_at: NullableTimestamp;
  updated_at: Timestamp;
}

/** D294 (0042): a file uploaded for a reply, its bytes kept until `expires_at`. */
export interface UploadedFilesTable {
  org_id: string;
  id: string;
  kind: string;
  mime_type: string;
  filename: string;
  size: number;
  bytes: Buffer;
  created_by: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
}

export interface ReplyHandoffsTable {
  org_id: string;
  message_id: string;
  conversation_id: string;
  seq: GeneratedAlways<string>;
  request: Json<unknown>;
  state: Generated<string>;
  attempts: Generated<number>;
  next_attempt_at: Generated<Date>;
  lease_until: NullableTimestamp;
  lease_token: string | null;
  handoff_started_at: NullableTimestamp;
  created_at: Generated<Date>;
}

export interface BroadcastsTable {
  org_id: string;
  id: string;
  template_id: string;
  template_name: string;
  template_language: string;
  template_category: string;
  account_id: string;
  channel_id: string;
  stored_status: string | null;
  requested: number;
  origin: ColumnType<string, string | undefined, string>;
  idempotency_key: string | null;
  /** decisions §13: the broadcast whose failures this one retries (migration 0010). */
  retry_of: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** Set once, by the statement that detects the end (migration 0008): `broadcast.finished` is emitted once. */
  finished_at: NullableTimestamp;
  // decisions §16 (migration 0014): an audience broadcast's campaign columns and the state of its start.
  name: ColumnType<string | null, string | null | undefined, string | null>;
  audience: ColumnType<unknown | null, string | null | undefined, string | null>;
  /** The request's shared recipient fields (variables, url_suffixes, media, coupon_code, lto_expiration). */
  audience_input: ColumnType<unknown | null, string | null | undefined, string | null>;
  send_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  started_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  status_reason: ColumnType<string | null, string | null | undefined, string | null>;
  held_until: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** null for sends; `scheduled`, `preparing` (recipients being added) or `ready` (all added). */
  phase: ColumnType<string | null, string | null | undefined, string | null>;
  snapshot_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** The keyset position (created_at, id) of the last contact added: advanced in the statement that adds. */
  checkpoint_created_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  checkpoint_id: ColumnType<string | null, string | null | undefined, string | null>;
  base_components: ColumnType<unknown | null, string | null | undefined, string | null>;
  contact_tokens: ColumnType<unknown | null, string | null | undefined, string | null>;
}

export interface BroadcastRecipientsTable {
  org_id: string;
  broadcast_id: string;
  position: number;
  account_id: string;
  channel_id: string;
  contact_id: string;
  phone: string;
  /** Null for an audience broadcast's recipient (D219): its components are built from `send_values`. */
  send_components: ColumnType<unknown | null, string | null | undefined, string | null>;
  /** decisions §16, D219: an audience recipient's values of its broadcast's `contact_tokens`, in their order. */
  send_values: ColumnType<(string | null)[] | null, (string | null)[] | null | undefined, (string | null)[] | null>;
  status: ColumnType<string, string | undefined, string>;
  error: string | null;
  error_message: string | null;
  error_code: number | null;
  platform_message_id: string | null;
  attempts: Generated<number>;
  next_attempt_at: Timestamp;
  lease_until: NullableTimestamp;
  lease_token: string | null;
  handoff_started_at: NullableTimestamp;
  charged: ColumnType<number, number | undefined, number>;
  queued_at: Timestamp;
  reached_at: NullableTimestamp;
  sent_at: NullableTimestamp;
  delivered_at: NullableTimestamp;
  read_at: NullableTimestamp;
  failed_at: NullableTimestamp;
  updated_at: Timestamp;
  /** decisions §13: the original recipient a retry's recipient retries (migration 0010). */
  retry_of_broadcast_id: ColumnType<string | null, string | null | undefined, string | null>;
  retry_of_position: ColumnType<number | null, number | null | undefined, number | null>;
  /** decisions D176: the price a `handoff_unconfirmed` failure gave back, charged again by a later report (0025). */
  unconfirmed_charge: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface IdempotencyKeysTable {
  org_id: string;
  key: string;
  request_hash: string;
  broadcast_id: string | null;
  claim_token: string | null;
  locked_until: NullableTimestamp;
  created_at: Timestamp;
}

export interface ChannelSendWindowsTable {
  org_id: string;
  channel_id: string;
  window_start: number;
  count: number;
}

/** decisions §7: a phone messaged from the account in the last 24 hours (kept by triggers, see migration 0009). */
export interface MessagingWindowPhonesTable {
  org_id: string;
  account_id: string;
  phone: string;
  last_queued_at: Timestamp;
}

/** How many rows of messaging_window_phones the account has. */
export interface MessagingWindowsTable {
  org_id: string;
  account_id: string;
  phones: Generated<number>;
}

/** Phones whose window row the account's next send recounts (a recipient stopped being live, moved or went). */
export interface MessagingWindowRecountsTable {
  org_id: string;
  account_id: string;
  id: GeneratedAlways<string>;
  phone: string;
}

export interface AppStateTable {
  key: string;
  value: Json<unknown>;
  created_at: Generated<Date>;
}

export interface WebhookEndpointsTable {
  org_id: string;
  id: string;
  url: string;
  events: Json<string[]>;
  description: string | null;
  enabled: Generated<boolean>;
  disabled_reason: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: NullableTimestamp;
  /** The SECRETS_KEY id that encrypts `secret` and `previous_secret`; null while they are in clear. */
  secrets_key_id: string | null;
  failing_since: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface WebhookEventsTable {
  org_id: string;
  id: string;
  type: string;
  payload: string;
  created_at: Timestamp;
}

/** One attempt of a webhook delivery, as the deliveries log shows it. */
export interface DeliveryAttempt {
  attempted_at: string;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
}

export interface WebhookDeliveriesTable {
  org_id: string;
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: Generated<string>;
  attempts: Generated<number>;
  attempt_limit: number | null;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: Timestamp;
  lease_token: string | null;
  /** 0: conversational events (`message.*`, `ping`); 1: every other event. */
  lane: Generated<number>;
  /** Each attempt, oldest first (the last WEBHOOK_ATTEMPT_LOG_SIZE). */
  attempt_log: ColumnType<DeliveryAttempt[], string | undefined, string>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A person of an organization who signs in to the console (decisions §17). */
export interface UsersTable {
  org_id: string;
  id: string;
  email: string;
  name: string | null;
  role: 'admin' | 'agent';
  /** Null until the person chooses a password through a sign-in link. */
  password_hash: string | null;
  created_at: Timestamp;
  last_sign_in_at: NullableTimestamp;
  /** decisions §19 (0037): available for conversations, or away. */
  available: Generated<boolean>;
}

export interface TeamsTable {
  org_id: string;
  id: string;
  name: string;
  auto_assign: Generated<boolean>;
  max_open_per_member: Generated<number>;
  turns: ColumnType<string, string | number | undefined, string | number>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface TeamMembersTable {
  org_id: string;
  team_id: string;
  user_id: string;
  last_turn: ColumnType<string, string | number | undefined, string | number>;
}

export interface CannedResponsesTable {
  org_id: string;
  id: string;
  short_code: string;
  text: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface UserSessionsTable {
  org_id: string;
  id: string;
  user_id: string;
  token_hash: string;
  created_at: Date;
  last_seen_at: Date;
  /** The absolute end (7 days after sign-in); the idle end is last_seen_at + 12 hours. */
  expires_at: Date;
}

export interface UserSignInLinksTable {
  org_id: string;
  id: string;
  user_id: string;
  token_hash: string;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
}

export interface SignInAttemptsTable {
  id: Generated<string>;
  email: string;
  attempted_at: Date;
}

export interface ConsoleStreamsTable {
  org_id: string;
  process_id: string;
  expires_at: Date;
}

export interface DB extends AutomationTables {
  uploaded_files: UploadedFilesTable;
  organizations: OrganizationsTable;
  api_keys: ApiKeysTable;
  messaging_accounts: MessagingAccountsTable;
  channels: ChannelsTable;
  contacts: ContactsTable;
  templates: TemplatesTable;
  processed_webhook_events: ProcessedWebhookEventsTable;
  conversations: ConversationsTable;
  messages: MessagesTable;
  reply_handoffs: ReplyHandoffsTable;
  broadcasts: BroadcastsTable;
  broadcast_recipients: BroadcastRecipientsTable;
  idempotency_keys: IdempotencyKeysTable;
  channel_send_windows: ChannelSendWindowsTable;
  messaging_window_phones: MessagingWindowPhonesTable;
  messaging_windows: MessagingWindowsTable;
  messaging_window_recounts: MessagingWindowRecountsTable;
  crm_properties: CrmPropertiesTable;
  contact_property_values: ContactPropertyValuesTable;
  funnel_stages: FunnelStagesTable;
  sub_origins: SubOriginsTable;
  contact_sort_versions: ContactSortVersionsTable;
  contact_versions: ContactVersionsTable;
  directory: DirectoryTable;
  app_state: AppStateTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  users: UsersTable;
  teams: TeamsTable;
  team_members: TeamMembersTable;
  canned_responses: CannedResponsesTable;
  user_sessions: UserSessionsTable;
  user_sign_in_links: UserSignInLinksTable;
  sign_in_attempts: SignInAttemptsTable;
  console_streams: ConsoleStreamsTable;
}
