// The settings' own navigation (decisions §17 flow 7, §19): the organization's settings, its teams and its canned
// responses, each a page of its own that loads on demand.
import { NavLink } from 'react-router';
import { AUTOMATION_SECTIONS } from './automation/automation-sections.ts';

const SECTIONS = [
  { to: '/settings', label: 'Organization', end: true },
  { to: '/settings/teams', label: 'Teams', end: false },
  { to: '/settings/canned-responses', label: 'Canned responses', end: false },
  ...AUTOMATION_SECTIONS,
];

export function SettingsNav() {
  return (
    <nav aria-label="Settings" className="settings-nav">
      <ul>
        {SECTIONS.map((section) => (
          <li key={section.to}>
            <NavLink to={section.to} end={section.end}>
              {section.label}
            </NavLink>
          </li>
        ))}
      </ul>
    </nav>
  );
}
