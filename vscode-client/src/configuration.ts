/**
 * The `rein` section as the server gets it (workspace/configuration).
 *
 * The server validates the section strictly and owns the defaults, so the
 * client sends what the person set (user, workspace or folder settings), not
 * the contributed defaults, and leaves out the client's own keys
 * (`rein.server.*`, `rein.trace.*`). It adds `storagePath`, the extension's
 * workspace storage folder, where the server keeps its session database.
 */

import * as vscode from 'vscode';

/** Settings only the client reads. */
export const CLIENT_ONLY = ['server', 'trace'];

type Section = Record<string, unknown>;

function isObject(value: unknown): value is Section {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Pure: the part of `section` (the `rein` settings as nested objects) that
 * the person set. A contributed key is kept when `isSet` says so; keys that
 * are not contributed appear only because someone wrote them, so they stay.
 */
export function explicitSettings(
  section: Section,
  contributed: ReadonlySet<string>,
  isSet: (key: string) => boolean,
  prefix = 'rein',
): Section {
  const out: Section = {};
  for (const [name, value] of Object.entries(section)) {
    if (prefix === 'rein' && CLIENT_ONLY.includes(name)) {
      continue;
    }
    const key = `${prefix}.${name}`;
    if (contributed.has(key)) {
      if (isSet(key)) {
        out[name] = value;
      }
    } else if (isObject(value)) {
      const inner = explicitSettings(value, contributed, isSet, key);
      if (Object.keys(inner).length > 0) {
        out[name] = inner;
      }
    } else if (value !== undefined) {
      out[name] = value;
    }
  }
  return out;
}

/** Adds `storagePath` to the `rein` section, or answers `rein.storagePath`. */
export function withStoragePath(section: string | undefined, value: unknown, storagePath: string): unknown {
  if (section === 'rein') {
    return { ...(isObject(value) ? value : {}), storagePath };
  }
  if (section === 'rein.storagePath') {
    return storagePath;
  }
  return value;
}

/**
 * The names in `rein.mcp.servers` that the workspace's own settings define
 * (workspace or folder scope, from `inspect`): the server asks the person to
 * trust those, like the servers of `.vscode/mcp.json` and `.mcp.json`.
 */
export function workspaceServerNames(info: { workspaceValue?: unknown; workspaceFolderValue?: unknown } | undefined): string[] {
  const names = new Set<string>();
  for (const value of [info?.workspaceValue, info?.workspaceFolderValue]) {
    if (isObject(value)) {
      for (const name of Object.keys(value)) {
        names.add(name);
      }
    }
  }
  return [...names].sort();
}

/**
 * What the server must know to trust MCP servers: `mcp.workspaceServers`
 * (always set here, so a workspace cannot write its own) and, in a workspace
 * the person has not trusted, `mcp.configFiles: false`: no MCP server the
 * workspace defines may start (`.vscode/mcp.json` and `.mcp.json` are not
 * read; the workspace's `rein.mcp.servers` is already ignored there, a
 * restricted setting).
 */
export function withWorkspaceTrust(section: Section, trusted: boolean, workspaceServers: readonly string[] = []): Section {
  const mcp = isObject(section.mcp) ? section.mcp : {};
  return {
    ...section,
    mcp: { ...mcp, workspaceServers: [...workspaceServers], ...(trusted ? {} : { configFiles: false }) },
  };
}

/** The contributed `rein.*` setting keys of this extension's package.json. */
export function contributedKeys(packageJSON: unknown): Set<string> {
  const properties = (packageJSON as { contributes?: { configuration?: { properties?: Section } } }).contributes?.configuration
    ?.properties;
  return new Set(Object.keys(properties ?? {}));
}

/** The `rein` section for the server, for a resource's scope. */
export function serverSection(contributed: ReadonlySet<string>, scope?: vscode.Uri): Section {
  const all = vscode.workspace.getConfiguration(undefined, scope);
  const section = JSON.parse(JSON.stringify(vscode.workspace.getConfiguration('rein', scope))) as Section;
  return explicitSettings(section, contributed, (key) => {
    const info = all.inspect(key);
    return (
      info !== undefined &&
      (info.globalValue !== undefined || info.workspaceValue !== undefined || info.workspaceFolderValue !== undefined)
    );
  });
}
