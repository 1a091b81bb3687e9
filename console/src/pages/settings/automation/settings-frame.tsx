// A page of the settings for automation and the assistant (decisions §20): its title, the settings' navigation and
// the page's own styles (a file of its own, loaded with these pages).
import type { ReactNode } from 'react';
import { Page } from '../../../ui/page.tsx';
import { SettingsNav } from '../settings-nav.tsx';
import './automation.css';

export function SettingsFrame({ title, children }: { title: string; children: ReactNode }) {
  return (
    <Page title={title}>
      <SettingsNav />
      {children}
    </Page>
  );
}

/** The API's message as a sentence: a capital first letter and a full stop (`close must be after open`). */
export function sentence(message: string | undefined): string | undefined {
  if (!message) return message;
  const text = message.replace(/^./, (c) => c.toUpperCase());
  return /[.!?]$/.test(text) ? text : `${text}.`;
}
