// The folders of src/ depend one way (docs/architecture.md): the lower layers (http/, messaging/, lib/, db/ with its
// migrations, config.ts) never import a feature (modules/) or the worker (D290, D331), a feature never imports the
// worker, which drives features, the outbox (events/) imports no other feature (D332), the inbound processor no
// platform adapter (D333), and the messaging account sits below the features that send, conversations below
// broadcasts (D306), the queue engine (recipients/) below broadcasts (D308). Biome's cycle rule catches circles; this catches a lower folder reaching up,
// which is no circle until someone closes it.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const src = join(root, 'src');

/** Every TypeScript file under a folder (or the one file named), as a path relative to src/ with forward slashes. */
function sourceFiles(folder: string): string[] {
  if (folder.endsWith('.ts')) return [folder];
  return readdirSync(join(src, folder), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => posix.join(folder, name.split('\\').join('/')));
}

// `import … from '…'` and `export … from '…'` (over several lines, `import type` included), a bare `import '…'`, and
// `import('…')`. Statements start a line, so a specifier quoted inside a comment's prose does not count.
const staticImport = /^\s*(?:import|export)\b[^;'"]*?\bfrom\s*['"]([^'"]+)['"]/gm;
const bareImport = /^\s*import\s*['"]([^'"]+)['"]/gm;
const dynamicImport = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/** The files of src/ that a source file imports, as paths relative to src/ (packages are left out). */
function importsOf(file: string, text: string): string[] {
  const specifiers = [staticImport, bareImport, dynamicImport].flatMap((pattern) =>
    [...text.matchAll(pattern)].map((match) => match[1]!),
  );
  return specifiers
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) =>
      relative(src, resolve(dirname(join(src, file)), specifier))
        .split('\\')
        .join('/'),
    );
}

const rules: { from: string; mayNotImport: string[] }[] = [
  // The lower layers: HTTP, the platform, helpers, the database (its migrations too) and the configuration (D290).
  { from: 'http/', mayNotImport: ['modules/', 'worker/'] },
  { from: 'messaging/', mayNotImport: ['modules/', 'worker/'] },
  { from: 'lib/', mayNotImport: ['modules/', 'worker/'] },
  { from: 'db/', mayNotImport: ['modules/', 'worker/'] },
  // The outbox knows no feature: each declares its events, the wiring lists them (D332).
  {
    from: 'modules/events/',
    mayNotImport: [
      ...readdirSync(join(src, 'modules'))
        .filter((feature) => feature !== 'events')
        .map((feature) => `modules/${feature}/`),
    ],
  },
  // The inbound processor reads callbacks through the platform port, never an adapter's own files (D333).
  { from: 'messaging/inbound.ts', mayNotImport: ['messaging/cloud/', 'messaging/sandbox/'] },
  // The configuration declares what it reads; the features read it (D331).
  { from: 'config.ts', mayNotImport: ['modules/', 'worker/'] },
  // The worker drives the features; no feature reaches back into it.
  { from: 'modules/', mayNotImport: ['worker/'] },
  // The messaging account sits below every feature that sends (D306); conversations never reach into broadcasts.
  {
    from: 'modules/messaging-accounts/',
    mayNotImport: ['modules/broadcasts/', 'modules/recipients/', 'modules/conversations/', 'modules/automation/'],
  },
  { from: 'modules/conversations/', mayNotImport: ['modules/broadcasts/', 'modules/recipients/'] },
  // The queue engine sits below the broadcasts feature, whose requests use it (D308).
  { from: 'modules/recipients/', mayNotImport: ['modules/broadcasts/'] },
];

/** The files of src/ that a file loads when it runs, itself included (`import type` loads nothing). */
function runtimeClosure(start: string): Set<string> {
  const seen = new Set<string>();
  const pending = [start];
  while (pending.length > 0) {
    const file = pending.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(join(src, file), 'utf8').replace(/^\s*(?:import|export)\s+type\b[^;]*;/gm, '');
    pending.push(...importsOf(file, text).filter((target) => target.endsWith('.ts')));
  }
  return seen;
}

describe('dependency direction', () => {
  it('reads import statements of every shape', () => {
    const text = [
      "import { a } from '../modules/x/a.ts';",
      "import type {\n  B,\n} from '../worker/b.ts';",
      "export { c } from './c.ts';",
      "import './d.ts';",
      "const e = await import('../lib/e.ts');",
      "import { f } from 'fastify';",
      "// a comment that says import { g } from '../modules/g.ts' is not an import",
    ].join('\n');
    expect(importsOf('http/file.ts', text)).toEqual([
      'modules/x/a.ts',
      'worker/b.ts',
      'http/c.ts',
      'http/d.ts',
      'lib/e.ts',
    ]);
  });

  it('no lower folder imports a higher one', () => {
    const violations: string[] = [];
    for (const rule of rules) {
      const files = sourceFiles(rule.from);
      expect(files.length).toBeGreaterThan(0);
      for (const file of files) {
        for (const target of importsOf(file, readFileSync(join(src, file), 'utf8'))) {
          if (rule.mayNotImport.some((higher) => target.startsWith(higher))) violations.push(`${file} -> ${target}`);
        }
      }
    }
    expect(violations).toEqual([]);
  });

  it("a broadcast's worker half (fan-out, audience steps, status reports) never loads modules/broadcasts/ (D308)", () => {
    const starts = [
      'worker/fanout.ts',
      'modules/recipients/audience-runner.ts',
      'modules/recipients/platform-status.handlers.ts',
    ];
    const loaded = starts.flatMap((start) => [...runtimeClosure(start)]);
    expect(loaded.length).toBeGreaterThan(starts.length);
    expect(loaded.filter((file) => file.startsWith('modules/broadcasts/'))).toEqual([]);
  });
});

describe('the console', () => {
  it('reaches the server only through the SDK package: no relative import leaves console/src (D330)', () => {
    const consoleSrc = join(root, 'console', 'src');
    const files = readdirSync(consoleSrc, { recursive: true, encoding: 'utf8' }).filter((name) => /\.tsx?$/.test(name));
    expect(files.length).toBeGreaterThan(50);
    const leaving = files.flatMap((file) =>
      importsOf(relative(src, join(consoleSrc, file)), readFileSync(join(consoleSrc, file), 'utf8'))
        .filter((target) => !target.startsWith('../console/src/'))
        .map((target) => `${file} -> ${target}`),
    );
    expect(leaving).toEqual([]);
  });
});
