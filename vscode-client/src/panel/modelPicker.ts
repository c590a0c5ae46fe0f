/**
 * The model picker of the panel: the button under the prompt box shows the
 * model of the next turn; clicking it lists the configured model and the
 * models VS Code offers (`rein/models`) and switches to the chosen one with
 * `rein/setModel` (every session, from its next turn; no server restart).
 */

import * as vscode from 'vscode';
import type { ReinConnection } from '../client';

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
  return model ? `${model} · ${provider}` : `${provider} (default model)`;
}

interface ModelItem extends vscode.QuickPickItem {
  entry: ModelEntry;
}

export function pickItems(result: ModelsResult): ModelItem[] {
  return result.models.map((entry) => {
    const current = entry.provider === result.current.provider && entry.model === result.current.model;
    return {
      label: entry.label,
      description: `${entry.provider}${entry.model ? ` · ${entry.model}` : ''}${current ? ' (current)' : ''}`,
      detail: entry.source === 'config' ? 'From the settings (rein.model)' : 'A language model VS Code offers',
      entry,
    };
  });
}

/** Ask which model; switch to it. The label of the model now in use, or undefined when nothing changed. */
export async function pickModel(connection: ReinConnection): Promise<string | undefined> {
  const result = await connection.sendRequest<ModelsResult>('rein/models', {});
  const placeHolder = result.vscodeLmError
    ? `Model for the next turn (VS Code's models are not listed: ${result.vscodeLmError})`
    : 'Model for the next turn';
  const picked = await vscode.window.showQuickPick(pickItems(result), { title: 'Rein: Model', placeHolder });
  if (!picked) {
    return undefined;
  }
  const { provider, model } = picked.entry;
  await connection.sendRequest('rein/setModel', { provider, model });
  return currentLabel({ ...result, current: { provider, model } });
}

/** The button's label from the server (undefined when it cannot say). */
export async function modelLabel(connection: ReinConnection): Promise<string | undefined> {
  try {
    return currentLabel(await connection.sendRequest<ModelsResult>('rein/models', {}));
  } catch {
    return undefined; // an older server without rein/models: no button text
  }
}
