import { type Static, Type } from 'typebox';
import { DateTime } from '../../http/schemas.ts';
import { KEY_PATTERN } from '../../lib/keys.ts';

const Name = Type.String({ minLength: 1, maxLength: 200 });
const Description = Type.String({ maxLength: 2000 });
const Key = Type.String({
  pattern: KEY_PATTERN,
  description: 'Lowercase machine key, `^[a-z][a-z0-9_]{0,63}$`; derived from the name when left out.',
});

export const FunnelStageSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    key: Type.String(),
    description: Type.String(),
    order_idx: Type.Integer(),
    is_initial: Type.Boolean({ description: 'New contacts start here; exactly one stage is initial.' }),
    created_at: DateTime,
    updated_at: DateTime,
  },
  {
    additionalProperties: false,
    title: 'FunnelStage',
    description: 'A stage of the funnel.',
    examples: [
      {
        id: 'fs_01JH5ZP5C6D7E8F9G0H1J2K3L4',
        name: 'Qualified',
        key: 'qualified',
        description: 'Asked for a quote.',
        order_idx: 1,
        is_initial: false,
        created_at: '2026-01-15T09:30:00.000Z',
        updated_at: '2026-01-15T09:30:00.000Z',
      },
    ],
  },
);
export type FunnelStage = Static<typeof FunnelStageSchema>;

export const FunnelStageList = Type.Object(
  { items: Type.Array(FunnelStageSchema) },
  { additionalProperties: false, title: 'FunnelStageList', description: 'Every funnel stage, in order.' },
);

export const FunnelStageInput = Type.Object(
  { name: Name, description: Type.Optional(Description), key: Type.Optional(Key) },
  {
    additionalProperties: false,
    title: 'FunnelStageInput',
    examples: [{ name: 'Qualified', description: 'Asked for a quote.' }],
  },
);
export type FunnelStageInput = Static<typeof FunnelStageInput>;

export const FunnelStagePatch = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    key: Type.Optional(Key),
    is_initial: Type.Optional(
      Type.Boolean({ description: '`true` moves the initial flag here. The initial stage cannot be unset.' }),
    ),
  },
  { additionalProperties: false, title: 'FunnelStagePatch', examples: [{ name: 'Quote sent' }] },
);
export type FunnelStagePatch = Static<typeof FunnelStagePatch>;

export const FunnelStageReorder = Type.Object(
  {
    items: Type.Array(
      Type.Object(
        { stage_id: Type.String({ minLength: 1 }), order_idx: Type.Integer({ minimum: 0 }) },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 100 },
    ),
  },
  {
    additionalProperties: false,
    title: 'FunnelStageReorder',
    examples: [{ items: [{ stage_id: 'fs_01JH5ZP5C6D7E8F9G0H1J2K3L4', order_idx: 0 }] }],
  },
);
export type FunnelStageReorder = Static<typeof FunnelStageReorder>;

export const DeleteStageQuery = Type.Object(
  {
    move_to: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'Stage that receives the contacts of this one.' }),
    ),
  },
  { additionalProperties: true },
);
export type DeleteStageQuery = Static<typeof DeleteStageQuery>;
