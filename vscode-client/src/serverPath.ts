/**
 * Finds the `rein` executable that `rein serve` is started from.
 *
 * Order: the `rein.server.path` setting; the `rein` next to the Python of the
 * workspace's selected environment (ms-python API, when that extension is
 * installed); `.venv/bin/rein` (or `venv/`) in a workspace folder; `PATH`.
 *
 * In a workspace that is not trusted, nothing inside a workspace folder is
 * started (a cloned repository's `.venv/bin/rein` would run its code): only a
 * `rein` outside every folder, or none until the person trusts the workspace.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';

export interface ServerLookup {
  /** The `rein.server.path` setting, already trimmed ("" when unset). */
  setting: string;
  workspaceFolders: readonly string[];
  /** Folders holding the selected Python environments' executables. */
  pythonBinDirs: readonly string[];
  pathEnv: string;
  platform: NodeJS.Platform;
  /** Whether the person trusts the workspace (`vscode.workspace.isTrusted`). */
  trusted: boolean;
  isExecutable(file: string): boolean;
}

const UNTRUSTED =
  'The workspace is not trusted, so Rein does not start a `rein` from inside it. ' +
  'Trust the workspace (Workspaces: Manage Workspace Trust), or install Rein outside it (on PATH).';

function insideAny(file: string, folders: readonly string[]): boolean {
  if (!path.isAbsolute(file)) {
    return true; // relative to wherever the process runs: not safe to start
  }
  return folders.some((folder) => {
    const rel = path.relative(folder, file);
    return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
  });
}

export type ServerLocation =
  | { found: true; path: string; source: 'setting' | 'python' | 'venv' | 'PATH' }
  | { found: false; reason: string };

function exeNames(platform: NodeJS.Platform): string[] {
  return platform === 'win32' ? ['rein.exe', 'rein.cmd', 'rein'] : ['rein'];
}

function expandSetting(setting: string, folders: readonly string[]): string {
  const first = folders[0] ?? '';
  const home = process.env.HOME ?? process.env.USERPROFILE ?? '';
  return setting
    .replace(/\$\{workspaceFolder\}/g, first)
    .replace(/^~(?=$|[\\/])/, home);
}

/** Pure: decides where the server is, given what the machine looks like. */
export function locateServer(lookup: ServerLookup): ServerLocation {
  const names = exeNames(lookup.platform);
  if (lookup.setting) {
    let file = expandSetting(lookup.setting, lookup.workspaceFolders);
    if (!path.isAbsolute(file) && lookup.workspaceFolders[0]) {
      file = path.join(lookup.workspaceFolders[0], file);
    }
    if (!lookup.trusted && insideAny(file, lookup.workspaceFolders)) {
      return { found: false, reason: `rein.server.path ("${lookup.setting}") is inside the workspace. ${UNTRUSTED}` };
    }
    return lookup.isExecutable(file)
      ? { found: true, path: file, source: 'setting' }
      : { found: false, reason: `rein.server.path is set to "${lookup.setting}", which is not an executable file.` };
  }
  const allowed = (file: string): boolean => lookup.trusted || !insideAny(file, lookup.workspaceFolders);
  for (const dir of lookup.pythonBinDirs) {
    for (const name of names) {
      const file = path.join(dir, name);
      if (allowed(file) && lookup.isExecutable(file)) {
        return { found: true, path: file, source: 'python' };
      }
    }
  }
  const binDir = lookup.platform === 'win32' ? 'Scripts' : 'bin';
  for (const folder of lookup.trusted ? lookup.workspaceFolders : []) {
    for (const venv of ['.venv', 'venv']) {
      for (const name of names) {
        const file = path.join(folder, venv, binDir, name);
        if (lookup.isExecutable(file)) {
          return { found: true, path: file, source: 'venv' };
        }
      }
    }
  }
  const separator = lookup.platform === 'win32' ? ';' : ':';
  for (const dir of lookup.pathEnv.split(separator)) {
    if (!dir) {
      continue;
    }
    for (const name of names) {
      const file = path.join(dir, name);
      if (allowed(file) && lookup.isExecutable(file)) {
        return { found: true, path: file, source: 'PATH' };
      }
    }
  }
  if (!lookup.trusted) {
    return { found: false, reason: `No \`rein\` executable found outside the workspace. ${UNTRUSTED}` };
  }
  return {
    found: false,
    reason:
      'No `rein` executable found in the selected Python environment, in .venv/ of the workspace or on PATH. ' +
      'Install Rein (pip install -e . in its repository) or set rein.server.path.',
  };
}

export function isExecutableFile(file: string): boolean {
  try {
    const stat = fs.statSync(file);
    if (!stat.isFile()) {
      return false;
    }
    if (process.platform === 'win32') {
      return true;
    }
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

interface PythonEnvironmentsApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { path: string } | undefined;
    resolveEnvironment?(env: { path: string }): Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
  };
}

async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The bin folders of the Python environments ms-python selected (optional). */
async function pythonBinDirs(folders: readonly vscode.WorkspaceFolder[]): Promise<string[]> {
  const extension = vscode.extensions.getExtension<PythonEnvironmentsApi>('ms-python.python');
  if (!extension) {
    return [];
  }
  try {
    const api = extension.isActive ? extension.exports : await withTimeout(Promise.resolve(extension.activate()), 5000);
    const environments = api?.environments;
    if (!environments) {
      return [];
    }
    const dirs: string[] = [];
    const resources: (vscode.Uri | undefined)[] = folders.length ? folders.map((f) => f.uri) : [undefined];
    for (const resource of resources) {
      const env = environments.getActiveEnvironmentPath(resource);
      if (!env?.path) {
        continue;
      }
      const resolved = environments.resolveEnvironment
        ? await withTimeout(Promise.resolve(environments.resolveEnvironment(env)), 5000)
        : undefined;
      const executable = resolved?.executable?.uri?.fsPath ?? env.path;
      dirs.push(/python[\d.]*(\.exe)?$/i.test(executable) ? path.dirname(executable) : path.join(executable, 'bin'));
    }
    return dirs;
  } catch {
    return []; // the Python extension is optional: any failure means "no answer"
  }
}

/** Looks the server up with the editor's current settings and environment. */
export async function findServer(): Promise<ServerLocation> {
  const folders = vscode.workspace.workspaceFolders ?? [];
  const setting = (vscode.workspace.getConfiguration('rein').get<string>('server.path') ?? '').trim();
  return locateServer({
    setting,
    workspaceFolders: folders.map((f) => f.uri.fsPath),
    pythonBinDirs: setting ? [] : await pythonBinDirs(folders),
    pathEnv: process.env.PATH ?? '',
    platform: process.platform,
    trusted: vscode.workspace.isTrusted,
    isExecutable: isExecutableFile,
  });
}

/** What `inspect('rein.server.path')` says, in the scopes Rein may ignore. */
export interface ServerPathScopes {
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

const set = (value: unknown): boolean => typeof value === 'string' && value.trim() !== '';

/**
 * Pure: why a `rein.server.path` the person set is not used, or undefined.
 * Rein reads the setting for the window, so a folder's value in a multi-root
 * workspace is never read; in an untrusted workspace VS Code ignores the
 * workspace's value (a restricted setting).
 */
export function ignoredServerPath(scopes: ServerPathScopes | undefined, trusted: boolean, multiRoot: boolean): string | undefined {
  if (multiRoot && set(scopes?.workspaceFolderValue) && scopes?.workspaceFolderValue !== scopes?.workspaceValue) {
    return "rein.server.path is set in a folder's settings, which Rein does not read in a multi-root workspace: set it in the user or workspace settings.";
  }
  if (!trusted && set(scopes?.workspaceValue)) {
    return "rein.server.path is set in this workspace's settings, which are ignored until you trust the workspace.";
  }
  return undefined;
}

/** ignoredServerPath for this window. */
export function ignoredServerPathHere(): string | undefined {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  const scopes = vscode.workspace.getConfiguration('rein', folder).inspect('server.path');
  return ignoredServerPath(scopes, vscode.workspace.isTrusted, vscode.workspace.workspaceFile !== undefined);
}
