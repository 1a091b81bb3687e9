// decisions §20: the settings' pages for automation and the assistant (admins only), each loaded on demand.
type Load = () => Promise<Record<string, unknown>>;

export const automationRoutes: [path: string, load: Load, component: string][] = [
  ['settings/business-hours', () => import('./business-hours.tsx'), 'BusinessHoursPage'],
  ['settings/rules', () => import('./rules.tsx'), 'RulesPage'],
  ['settings/rules/new', () => import('./rule-edit.tsx'), 'NewRulePage'],
  ['settings/rules/:ruleId', () => import('./rule-edit.tsx'), 'RulePage'],
  ['settings/ai-assistant', () => import('./ai-assistant.tsx'), 'AiAssistantPage'],
];
