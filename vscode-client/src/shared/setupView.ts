/**
 * The panel's *Your setup* section as data: what `rein/setup` answers,
 * grouped by kind, and what the editor's diagnostics were seen to cover.
 * Shared by the host and the page; pure, no imports but types.
 */

import type { SetupItem } from './protocol';

export interface SetupView {
  /** The kinds in the order `rein doctor` lists them, each with its items. */
  groups: { kind: string; items: SetupItem[] }[];
  /** No session loaded the workspace's MCP servers yet: the view says so, not "none". */
  mcpLoaded: boolean;
  /** `rein/setup` failed (an older server, not running): why. */
  error?: string | undefined;
  /** What the editor's diagnostics cover (the analyzer gate's source in this window). */
  coverage?: EditorCoverage | undefined;
}

/**
 * What can truthfully be said of the editor's analyzers: VS Code names no
 * diagnostics provider per language, so this is what was seen. `seen`: per
 * file extension, the diagnostics' sources reported for the workspace's
 * files; `unseen`: extensions of the open workspace files no source ever
 * reported on (none analyses them, or they are clean: the editor cannot
 * tell which).
 */
export interface EditorCoverage {
  seen: { ext: string; sources: string[] }[];
  unseen: string[];
}

/** The extension of a path (`.py`), or the file name when it has none (`Makefile`). */
function extension(file: string): string {
  const name = file.slice(file.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot) : name;
}

/** `EditorCoverage` from the editor's diagnostics (path, sources: none when it has no problem now) and the open files' paths. */
export function editorCoverage(diagnostics: readonly { path: string; sources: string[] }[], open: readonly string[]): EditorCoverage {
  const seen = new Map<string, Set<string>>();
  for (const entry of diagnostics) {
    const ext = extension(entry.path);
    const sources = seen.get(ext) ?? new Set<string>();
    for (const source of entry.sources) {
      sources.add(source);
    }
    seen.set(ext, sources);
  }
  const unseen = [...new Set(open.map(extension))].filter((ext) => !seen.has(ext)).sort();
  return {
    seen: [...seen].map(([ext, sources]) => ({ ext, sources: [...sources].sort() })).sort((a, b) => a.ext.localeCompare(b.ext)),
    unseen,
  };
}

const SETUP_KINDS = ['hook', 'skill', 'agent', 'command', 'instructions', 'mcp'];

/** The setup items grouped by kind, every kind present (an empty group says "none found"). */
export function setupView(items: readonly SetupItem[], mcpLoaded: boolean): SetupView {
  const kinds = [...SETUP_KINDS, ...items.map((i) => i.kind).filter((k) => !SETUP_KINDS.includes(k))];
  const groups = [...new Set(kinds)].map((kind) => ({ kind, items: items.filter((i) => i.kind === kind) }));
  return { groups, mcpLoaded };
}

/** How many items are not used ("invalid", "not trusted"): the section's badge. */
export function setupProblems(view: SetupView): number {
  return view.groups.reduce((n, group) => n + group.items.filter((i) => i.status === 'invalid' || i.status === 'not trusted').length, 0);
}
