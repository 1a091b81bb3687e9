// The event a template's review records (decisions §11), declared by the feature that owns its data (D332).
import type { EventDefinitions } from '../events/event-types.ts';
import { TemplateSchema } from './templates.schemas.ts';

export const TEMPLATE_EVENTS = {
  'template.status_updated': {
    data: TemplateSchema,
    summary: 'A template’s review status or category changed',
    description: 'Data: the Template after a review result or a category change.',
  },
} as const satisfies EventDefinitions;

// The outbox knows these types through its catalog, merged here (D332); the wiring lists the definitions.
declare module '../events/event-types.ts' {
  interface EventCatalog extends Readonly<typeof TEMPLATE_EVENTS> {}
}
