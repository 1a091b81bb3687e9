// The clock is a port so that time-dependent rules (trials, windows, leases) can be tested without sleeping.
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
