// Row types of every table, as Kysely sees them. Tenant tables lead their keys with org_id.
import type { ColumnType, Generated, GeneratedAlways } from 'kysely';

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
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: NullableTimestamp;
  // Kept by the database (0003-crm): sort and search keys, and the snapshot version for cursor walks.
  full_name: GeneratedAlways<string | null>;
  name_sort: GeneratedAlways<string | null>;
  city_sort: GeneratedAlways<string | null>;
  search_text: GeneratedAlways<string>;
  version_xid: Generated<string>;
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
  version_xid: string;
  replaced_xid: string;
  replaced_at: Timestamp;
  updated_at: Timestamp;
  name_sort: string | null;
  country: string | null;
  city_sort: string | null;
  origin: string | null;
}

export interface AppStateTable {
  key: string;
  value: Json<unknown>;
  created_at: Generated<Date>;
}

export interface DB {
  organizations: OrganizationsTable;
  api_keys: ApiKeysTable;
  messaging_accounts: MessagingAccountsTable;
  channels: ChannelsTable;
  contacts: ContactsTable;
  crm_properties: CrmPropertiesTable;
  contact_property_values: ContactPropertyValuesTable;
  funnel_stages: FunnelStagesTable;
  sub_origins: SubOriginsTable;
  contact_sort_versions: ContactSortVersionsTable;
  app_state: AppStateTable;
}
