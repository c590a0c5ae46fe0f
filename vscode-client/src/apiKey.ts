/**
 * API keys: never in settings. Either the environment the editor was started
 * with already holds the key, or "Rein: Set API Key" stores it in VS Code's
 * SecretStorage and the client passes it to `rein serve` in the environment
 * variable named by `rein.model.apiKeyEnv` (default by provider).
 */

import * as vscode from 'vscode';

const DEFAULT_KEY_ENV: Readonly<Record<string, string>> = {
  openai: 'OPENAI_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
};

/** The environment variable that carries the key, or undefined (replay needs none). */
export function apiKeyEnvName(provider: string | undefined, apiKeyEnv: string | undefined): string | undefined {
  const explicit = apiKeyEnv?.trim();
  if (explicit) {
    return explicit;
  }
  return DEFAULT_KEY_ENV[provider ?? 'openai'];
}

export function configuredKeyEnv(): { provider: string; envName: string | undefined } {
  const config = vscode.workspace.getConfiguration('rein.model');
  const provider = config.get<string>('provider') ?? 'openai';
  return { provider, envName: apiKeyEnvName(provider, config.get<string>('apiKeyEnv')) };
}

function secretId(envName: string): string {
  return `rein.apiKey.${envName}`;
}

export class ApiKeyStore {
  constructor(private readonly secrets: vscode.SecretStorage) {}

  get(envName: string): Thenable<string | undefined> {
    return this.secrets.get(secretId(envName));
  }

  store(envName: string, key: string): Thenable<void> {
    return this.secrets.store(secretId(envName), key);
  }

  delete(envName: string): Thenable<void> {
    return this.secrets.delete(secretId(envName));
  }

  /** The environment for the server process: the editor's, plus a stored key. */
  async serverEnv(base: NodeJS.ProcessEnv): Promise<NodeJS.ProcessEnv> {
    const env: NodeJS.ProcessEnv = { ...base, PYTHONUNBUFFERED: '1' };
    const { envName } = configuredKeyEnv();
    if (envName) {
      const key = await this.get(envName);
      if (key) {
        env[envName] = key;
      }
    }
    return env;
  }
}

/** "Rein: Set API Key": asks for the key, stores it, restarts the server. */
export async function promptForApiKey(store: ApiKeyStore, restart: (reason: string) => Promise<void>): Promise<void> {
  const { provider, envName } = configuredKeyEnv();
  if (!envName) {
    void vscode.window.showInformationMessage(
      vscode.l10n.t('The "{0}" provider needs no API key. Set rein.model.apiKeyEnv to name one anyway.', provider),
    );
    return;
  }
  const existing = await store.get(envName);
  const key = await vscode.window.showInputBox({
    title: vscode.l10n.t('Rein: API key for {0}', provider),
    prompt: existing
      ? vscode.l10n.t("Stored in VS Code's secret storage (not in settings) and given to the Rein server as {0}. Leave empty to remove the stored key.", envName)
      : vscode.l10n.t("Stored in VS Code's secret storage (not in settings) and given to the Rein server as {0}.", envName),
    password: true,
    ignoreFocusOut: true,
    placeHolder: existing ? vscode.l10n.t('(a key is stored)') : 'sk-…',
  });
  if (key === undefined) {
    return;
  }
  if (key.trim()) {
    await store.store(envName, key.trim());
    await restart(`API key for ${envName} stored`);
    void vscode.window.showInformationMessage(vscode.l10n.t('Rein: API key stored; the server restarted with {0} set.', envName));
  } else if (existing) {
    await store.delete(envName);
    await restart(`API key for ${envName} removed`);
    void vscode.window.showInformationMessage(vscode.l10n.t('Rein: stored API key for {0} removed.', envName));
  }
}
