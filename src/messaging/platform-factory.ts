// Chooses the messaging platform adapter from configuration: the sandbox by default, the Cloud API when asked.
import type { Clock } from '../lib/clock.ts';
import { createCloudPlatform } from './cloud/cloud-platform.ts';
import type { MessagingPlatform } from './platform.ts';
import { createSandboxPlatform, type SandboxPlatform } from './sandbox/sandbox-platform.ts';

export interface Messaging {
  platform: MessagingPlatform;
  /** Present with the sandbox: its operator controls and its webhook connection. */
  sandbox: SandboxPlatform | undefined;
}

export interface MessagingOptions {
  kind: 'sandbox' | 'cloud';
  clock: Clock;
  cloud?: { baseUrl: string; token: string; fetch?: typeof fetch; timeoutMs?: number };
  sandbox?: {
    nameCooldownMs?: number | undefined;
    autoReviewMs?: number | undefined;
    autoReportsMs?: number | undefined;
    rememberMessages?: number | undefined;
  };
  onError?: (error: unknown, what: string) => void;
}

export const DEFAULT_NAME_COOLDOWN_MS = 60_000;

export function createMessaging(options: MessagingOptions): Messaging {
  if (options.kind === 'cloud') {
    if (!options.cloud) throw new Error('the cloud platform needs a base URL and a token');
    return { platform: createCloudPlatform(options.cloud), sandbox: undefined };
  }
  const sandbox = createSandboxPlatform({
    clock: options.clock,
    nameCooldownMs: options.sandbox?.nameCooldownMs ?? DEFAULT_NAME_COOLDOWN_MS,
    autoReviewMs: options.sandbox?.autoReviewMs,
    autoReportsMs: options.sandbox?.autoReportsMs,
    rememberMessages: options.sandbox?.rememberMessages,
    ...(options.onError ? { onError: options.onError } : {}),
  });
  return { platform: sandbox, sandbox };
}

/** Demo mode (decisions §10): the sandbox reviews after 2 s and reports after 1 s unless configured otherwise. */
export const DEMO_AUTO_REVIEW_MS = 2000;
export const DEMO_AUTO_REPORTS_MS = 1000;

export interface MessagingConfig {
  messagingPlatform: 'sandbox' | 'cloud';
  cloudApiBaseUrl: string;
  cloudApiToken: string | undefined;
  sandboxAutoReviewMs: number | undefined;
  sandboxAutoReportsMs: number | undefined;
  sandboxNameCooldownMs: number;
}

/** The platform as the process configuration says; `demo` is an embedded database with no ADMIN_TOKEN. */
export function messagingFromConfig(
  config: MessagingConfig,
  clock: Clock,
  demo: boolean,
  onError?: (error: unknown, what: string) => void,
  /** False in a process without the HTTP API: nobody can ask its sandbox about accepted messages. */
  controls = true,
): Messaging {
  return createMessaging({
    kind: config.messagingPlatform,
    clock,
    ...(config.cloudApiToken ? { cloud: { baseUrl: config.cloudApiBaseUrl, token: config.cloudApiToken } } : {}),
    sandbox: {
      nameCooldownMs: config.sandboxNameCooldownMs,
      autoReviewMs: config.sandboxAutoReviewMs ?? (demo ? DEMO_AUTO_REVIEW_MS : undefined),
      autoReportsMs: config.sandboxAutoReportsMs ?? (demo ? DEMO_AUTO_REPORTS_MS : undefined),
      ...(controls ? {} : { rememberMessages: 0 }),
    },
    ...(onError ? { onError } : {}),
  });
}
