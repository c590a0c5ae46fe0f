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

/**
 * The settings that widen what runs without asking. Only the person's own
 * (user) settings count: package.json gives them the `machine` scope (VS
 * Code drops a workspace's value) and restricts them; the section sent to
 * the server carries the user's value only, and a workspace that tries to
 * set one is named to the person.
 */
export const USER_ONLY_SETTINGS = [
  'rein.approval.command',
  'rein.approval.mcp',
  'rein.approval.mcpAllow',
  'rein.tools.passEnv',
  // Hooks are commands Rein runs unasked; their options bound how long and how often.
  'rein.hooks',
  'rein.hookOptions.timeoutS',
  'rein.hookOptions.maxStopContinuations',
  // The sandbox's widenings: what commands may write and reach, and which program jails them.
  'rein.sandbox.writable',
  'rein.sandbox.network',
  'rein.sandbox.bwrap',
  // Which other commands (gates, preview, installs, hooks, MCP servers) run in the sandbox.
  'rein.sandbox.also',
];

/** What `inspect` says of a setting, in the scopes that matter here. */
export interface SettingScopes {
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

/** Pure: `section` with each of USER_ONLY_SETTINGS as the user set it (left out when they did not). */
export function userOnly(section: Section, inspect: (key: string) => SettingScopes | undefined): Section {
  const groups = new Map<string, Map<string, unknown>>();
  // A setting with no inner name (`rein.hooks`): its whole value is the user's.
  const wholes = new Map<string, unknown>();
  for (const key of USER_ONLY_SETTINGS) {
    const [, group = '', name = ''] = key.split('.');
    if (name === '') {
      wholes.set(group, inspect(key)?.globalValue);
      continue;
    }
    const names = groups.get(group) ?? new Map<string, unknown>();
    names.set(name, inspect(key)?.globalValue);
    groups.set(group, names);
  }
  const out: Section = {};
  for (const [group, value] of Object.entries(section)) {
    if (wholes.has(group)) {
      continue;
    }
    const names = groups.get(group);
    if (!names) {
      out[group] = value;
      continue;
    }
    const kept = Object.entries(isObject(value) ? value : {}).filter(([name]) => !names.has(name));
    const user = [...names].filter(([, setting]) => setting !== undefined);
    const inner = Object.fromEntries([...kept, ...user]);
    if (Object.keys(inner).length > 0) {
      out[group] = inner;
    }
  }
  for (const [group, names] of groups) {
    const user = [...names].filter(([, setting]) => setting !== undefined);
    if (!(group in section) && user.length > 0) {
      out[group] = Object.fromEntries(user);
    }
  }
  for (const [group, value] of wholes) {
    if (value !== undefined) {
      out[group] = value;
    }
  }
  return out;
}

/** Pure: the USER_ONLY_SETTINGS a workspace's (or a folder's) own settings try to set. */
export function workspaceWidenings(inspect: (key: string) => SettingScopes | undefined): string[] {
  return USER_ONLY_SETTINGS.filter((key) => {
    const info = inspect(key);
    return info?.workspaceValue !== undefined || info?.workspaceFolderValue !== undefined;
  });
}

/** Pure: what the person is told about `keys` (none: undefined). */
export function wideningNotice(keys: readonly string[]): string | undefined {
  if (keys.length === 0) {
    return undefined;
  }
  return `This workspace tries to set ${keys.join(', ')} in its own settings; Rein ignores it: only your user settings can widen what runs without asking.`;
}

/** The notice for this window's folders (undefined: no workspace tries). */
export function wideningNoticeHere(): string | undefined {
  const folders = vscode.workspace.workspaceFolders ?? [];
  const found = new Set<string>();
  for (const folder of folders.length ? folders.map((f) => f.uri) : [undefined]) {
    const all = vscode.workspace.getConfiguration(undefined, folder);
    for (const key of workspaceWidenings((k) => all.inspect(k))) {
      found.add(key);
    }
  }
  return wideningNotice([...found]);
}

/**
 * Pure: `section` with `tools.secretFiles` as the person's user settings
 * set it (left out when they did not: the server's defaults) and the
 * workspace's and folders' lists as `tools.workspaceSecretFiles`, which the
 * server only adds: a workspace cannot shorten the list, and its exceptions
 * (`!glob`) are dropped, so an untrusted workspace never unlocks a secret file.
 */
export function withSecretFiles(section: Section, inspect: (key: string) => SettingScopes | undefined): Section {
  const info = inspect('rein.tools.secretFiles');
  const tools: Section = isObject(section.tools) ? { ...section.tools } : {};
  delete tools.secretFiles;
  delete tools.workspaceSecretFiles;
  if (info?.globalValue !== undefined) {
    tools.secretFiles = info.globalValue;
  }
  const added = new Set<string>();
  for (const value of [info?.workspaceValue, info?.workspaceFolderValue]) {
    for (const glob of Array.isArray(value) ? value : []) {
      if (typeof glob === 'string' && glob.trim() !== '' && !glob.trim().startsWith('!')) {
        added.add(glob.trim());
      }
    }
  }
  if (added.size > 0) {
    tools.workspaceSecretFiles = [...added];
  }
  const out: Section = { ...section };
  if (Object.keys(tools).length > 0) {
    out.tools = tools;
  } else {
    delete out.tools;
  }
  return out;
}

/** The `rein` section for the server, for a resource's scope. */
export function serverSection(contributed: ReadonlySet<string>, scope?: vscode.Uri): Section {
  const all = vscode.workspace.getConfiguration(undefined, scope);
  const section = JSON.parse(JSON.stringify(vscode.workspace.getConfiguration('rein', scope))) as Section;
  const explicit = explicitSettings(section, contributed, (key) => {
    const info = all.inspect(key);
    return (
      info !== undefined &&
      (info.globalValue !== undefined || info.workspaceValue !== undefined || info.workspaceFolderValue !== undefined)
    );
  });
  const inspect = (key: string): SettingScopes | undefined => all.inspect(key);
  return withSecretFiles(userOnly(explicit, inspect), inspect);
}
