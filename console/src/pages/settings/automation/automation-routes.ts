// decisions §20: the settings' pages for automation and the assistant (admins only), each loaded on demand.
type Load = () => Promise<Record<string, unknown>>;

export const automationRoutes: [path: string, load: Load, component: string][] = [
  ['settings/business-hours', () => import('./business-hours.tsx'), 'BusinessHoursPage'],
  ['settings/ai-assistant', () => import('./ai-assistant.tsx'), 'AiAssistantPage'],
];
