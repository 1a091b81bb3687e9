// decisions §20: the settings' pages for automation and the assistant, listed in the settings' navigation.
export const AUTOMATION_SECTIONS = [
  { to: '/settings/business-hours', label: 'Business hours', end: false },
  { to: '/settings/rules', label: 'Rules', end: false },
  { to: '/settings/ai-assistant', label: 'AI assistant', end: false },
];
