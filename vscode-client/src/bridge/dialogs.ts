/**
 * The person in the loop: `rein/confirm` (allow a tool call) as a modal with
 * the command or path shown, and `rein/askUser` (the model asks a question)
 * as an input box.
 */

import * as vscode from 'vscode';
import type { ReinConnection } from '../client';
import { Methods, type AskUserParams, type AskUserResult, type ConfirmParams, type ConfirmResult } from '../shared/protocol';

export const ALLOW = 'Allow';
export const DENY = 'Deny';

export async function confirmToolCall(params: Partial<ConfirmParams>): Promise<ConfirmResult> {
  const tool = params.tool ?? 'a tool';
  const title = params.title?.trim() || `Allow ${tool}?`;
  const choice = await vscode.window.showWarningMessage(
    `Rein: ${title}`,
    { modal: true, detail: `${params.detail ?? ''}\n\nTool: ${tool}`.trim() },
    ALLOW,
    DENY,
  );
  return { approved: choice === ALLOW };
}

export async function askUser(params: Partial<AskUserParams>): Promise<AskUserResult> {
  const answer = await vscode.window.showInputBox({
    title: 'Rein asks',
    prompt: params.question ?? 'Rein has a question.',
    placeHolder: 'Your answer (Escape to decline)',
    ignoreFocusOut: true,
  });
  return { answer: answer ?? null };
}

export function registerDialogs(context: vscode.ExtensionContext, connection: ReinConnection): void {
  context.subscriptions.push(
    connection.onRequest(Methods.confirm, (params: Partial<ConfirmParams>) => confirmToolCall(params)),
    connection.onRequest(Methods.askUser, (params: Partial<AskUserParams>) => askUser(params)),
  );
}
