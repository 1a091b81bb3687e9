// decisions §20: the shapes of business hours (GET/PUT /v1/business-hours).
import { type Static, Type } from 'typebox';
import { StringEnum } from '../../http/schemas.ts';
import { WEEK_DAYS } from './business-hours.ts';

/** At most this many intervals in a week (a day may be listed more than once). */
export const MAX_INTERVALS = 50;

const OPEN_PATTERN = '^([01][0-9]|2[0-3]):[0-5][0-9]$';
const CLOSE_PATTERN = '^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$';

const Interval = Type.Object(
  {
    day: StringEnum(WEEK_DAYS),
    open: Type.String({ pattern: OPEN_PATTERN, description: '`HH:MM`, local time.', examples: ['09:00'] }),
    close: Type.String({
      pattern: CLOSE_PATTERN,
      description: '`HH:MM` after `open` (`24:00`: until midnight).',
      examples: ['17:00'],
    }),
  },
  { additionalProperties: false },
);

export const AwayMessage = Type.Object(
  { text: Type.String({ minLength: 1, maxLength: 4096 }) },
  { additionalProperties: false },
);

const fields = {
  enabled: Type.Boolean({ description: 'While false the organization is always open (no away message).' }),
  week: Type.Array(Interval, {
    maxItems: MAX_INTERVALS,
    description:
      'Opening intervals in the organization’s timezone (`GET /v1/me`). A day may appear more than once; a day ' +
      'not listed is closed.',
  }),
  away_message: Type.Union([AwayMessage, Type.Null()], {
    description:
      'Sent (`sender: "system"`) to a contact who writes while closed, in a conversation no user or assistant ' +
      'owns, at most once per closed period per conversation; null sends none.',
  }),
};

const example = {
  enabled: true,
  week: [
    { day: 'mon', open: '09:00', close: '12:30' },
    { day: 'mon', open: '13:30', close: '18:00' },
    { day: 'sat', open: '10:00', close: '14:00' },
  ],
  away_message: { text: 'Thanks for writing! We are closed now and answer from 09:00.' },
};

export const BusinessHoursSchema = Type.Object(fields, {
  additionalProperties: false,
  title: 'BusinessHours',
  description: 'The organization’s opening hours and away message (decisions §20). Disabled by default.',
  examples: [example],
});
export type BusinessHoursView = Static<typeof BusinessHoursSchema>;

export const BusinessHoursInput = Type.Object(
  {
    enabled: fields.enabled,
    week: Type.Optional(fields.week),
    away_message: Type.Optional(fields.away_message),
  },
  {
    additionalProperties: false,
    title: 'BusinessHoursInput',
    description: 'Replaces the whole setting: a `week` left out is empty, an `away_message` left out is null.',
    examples: [example],
  },
);
export type BusinessHoursInput = Static<typeof BusinessHoursInput>;
