// The shapes of decisions §19 the settings pages show, from the SDK's generated types (the calls are the SDK's own
// `api.teams.*` and `api.cannedResponses.*`).
import type { components } from '@crm-messaging/sdk';

export type Team = components['schemas']['Team'];
export type CannedResponse = components['schemas']['CannedResponse'];
