/**
 * The model picker of the panel: the button under the prompt box shows the
 * model of the next turn; clicking it lists the configured model and the
 * models VS Code offers (`rein/models`) and switches to the chosen one with
 * `rein/setModel`: the panel's session from its next turn and the sessions
 * made afterwards (`newSessions`); the other sessions keep theirs. No server
 * restart. Without a session yet, every session (the server's default).
 */

import * as vscode from 'vscode';
import type { ReinConnection } from '../connection';

export interface ModelEntry {
  provider: string;
  model: string;
  label: string;
  source: 'config' | 'vscode-lm';
}

export interface ModelsResult {
  current: { provider: string; model: string };
  models: ModelEntry[];
  vscodeLmError?: string;
}

/** What the button says: a VS Code model's name, else model · provider. */
export function currentLabel(result: ModelsResult): string {
  const { provider, model } = result.current;
  const known = result.models.find((m) => m.provider === provider && m.model === model);
  if (known && known.provider === 'vscode-lm') {
    return known.label;
  }
  return model ? `${model} · ${provider}` : vscode.l10n.t('{0} (default model)', provider);
}

interface ModelItem extends vscode.QuickPickItem {
  entry: ModelEntry;
}

export function pickItems(result: ModelsResult): ModelItem[] {
  return result.models.map((entry) => {
    const name = entry.model ? `${entry.provider} · ${entry.model}` : entry.provider;
    const current = entry.provider === result.current.provider && entry.model === result.current.model;
    return {
      label: entry.label,
      description: current ? vscode.l10n.t('{0} (current)', name) : name,
      detail: entry.source === 'config' ? vscode.l10n.t('From the settings (rein.model)') : vscode.l10n.t('A language model VS Code offers'),
      entry,
    };
  });
}

/** `rein/models` params: the session's model, else a new session's. */
function sessionParams(sessionId: string | null | undefined): { sessionId?: string } {
  return sessionId ? { sessionId } : {};
}

/**
 * Ask which model; switch the panel's session `sessionId` (and the sessions
 * made afterwards) to it, or every session when the panel has none yet. The
 * label of the model now in use, or undefined when nothing changed.
 */
export async function pickModel(connection: ReinConnection, sessionId?: string | null): Promise<string | undefined> {
  const result = await connection.sendRequest<ModelsResult>('rein/models', sessionParams(sessionId));
  const placeHolder = result.vscodeLmError
    ? vscode.l10n.t("Model for the next turn (VS Code's models are not listed: {0})", result.vscodeLmError)
    : vscode.l10n.t('Model for the next turn');
  const picked = await vscode.window.showQuickPick(pickItems(result), { title: vscode.l10n.t('Rein: Model'), placeHolder });
  if (!picked) {
    return undefined;
  }
  const { provider, model } = picked.entry;
  const params = sessionId ? { provider, model, sessionId, newSessions: true } : { provider, model };
  await connection.sendRequest('rein/setModel', params);
  return currentLabel({ ...result, current: { provider, model } });
}

/** The button's label from the server: session `sessionId`'s model, else a new session's (undefined when it cannot say). */
export async function modelLabel(connection: ReinConnection, sessionId?: string | null): Promise<string | undefined> {
  try {
    return currentLabel(await connection.sendRequest<ModelsResult>('rein/models', sessionParams(sessionId)));
  } catch {
    return undefined; // an older server without rein/models: no button text
  }
}
