/**
 * The person in the loop: `rein/confirm` (allow a tool call) as a modal with
 * the command or path shown, and `rein/askUser` (the model asks a question,
 * or an MCP server's configuration needs an input) as an input box, hidden
 * for a password, or a pick list; an answer the server asks to `remember` is
 * kept in SecretStorage per workspace and given without asking next time.
 */

import * as vscode from 'vscode';
import type { ReinConnection } from '../connection';
import {
  Methods,
  type ApprovalRule,
  type AskUserParams,
  type AskUserResult,
  type ConfirmParams,
  type ConfirmResult,
} from '../shared/protocol';
import { plain } from '../panel/text';

export const ALLOW = vscode.l10n.t('Allow');
export const ALWAYS_SESSION = vscode.l10n.t('Always allow (session)');
export const ALWAYS_WORKSPACE = vscode.l10n.t('Always allow (workspace)');
export const PREFIX_SESSION = vscode.l10n.t('Always allow this prefix (session)');
export const PREFIX_WORKSPACE = vscode.l10n.t('Always allow this prefix (workspace)');
export const DENY = vscode.l10n.t('Deny');

const KINDS: ReadonlySet<string> = new Set<ApprovalRule['kind']>(['command', 'write', 'mcp']);

/** How a rule reads in the dialog: command "npm test", writes to "src/**", MCP tool "time/now". */
export function ruleText(rule: ApprovalRule): string {
  switch (rule.kind) {
    case 'command':
      return vscode.l10n.t('command "{0}"', rule.pattern);
    case 'write':
      return vscode.l10n.t('writes to "{0}"', rule.pattern);
    case 'mcp':
      return vscode.l10n.t('MCP tool "{0}"', rule.pattern);
  }
}

function isRule(value: unknown): value is ApprovalRule {
  const rule = value as Partial<ApprovalRule> | null;
  return typeof rule === 'object' && rule !== null && typeof rule.pattern === 'string' && rule.pattern !== '' &&
    typeof rule.kind === 'string' && KINDS.has(rule.kind);
}

/** The rules the server offers (anything that is not a rule is left out). */
function offeredRules(params: Partial<ConfirmParams>): ApprovalRule[] {
  const rules: unknown[] = Array.isArray(params.rules) ? params.rules : [params.rule];
  return rules.filter(isRule);
}

/** How a wider rule reads: commands starting with "git log" (its pattern without the final " *"). */
function prefixText(rule: ApprovalRule): string {
  if (rule.kind === 'command' && rule.pattern.endsWith(' *')) {
    return vscode.l10n.t('commands starting with "{0}"', rule.pattern.slice(0, -2));
  }
  return ruleText(rule);
}

export async function confirmToolCall(params: Partial<ConfirmParams>): Promise<ConfirmResult> {
  const tool = params.tool ?? vscode.l10n.t('a tool');
  const title = params.title?.trim() || vscode.l10n.t('Allow {0}?', tool);
  const rules = offeredRules(params);
  // The wider choice (a program and its subcommand), offered beside the exact one.
  const prefixRules = rules.length && Array.isArray(params.prefixRules) ? params.prefixRules.filter(isRule) : [];
  let keeps = rules.length ? `\n\n${vscode.l10n.t('"Always allow" keeps exactly: {0}', rules.map(ruleText).join(', '))}` : '';
  if (prefixRules.length) {
    keeps += `\n${vscode.l10n.t('"Always allow this prefix" keeps: {0}', prefixRules.map(prefixText).join(', '))}`;
  }
  const choices = rules.length ? [ALLOW, ALWAYS_SESSION, ALWAYS_WORKSPACE] : [ALLOW];
  if (prefixRules.length) {
    choices.push(PREFIX_SESSION, PREFIX_WORKSPACE);
  }
  choices.push(DENY);
  const choice = await vscode.window.showWarningMessage(
    plain(vscode.l10n.t('Rein: {0}', title)),
    { modal: true, detail: plain(`${params.detail ?? ''}\n\n${vscode.l10n.t('Tool: {0}', tool)}${keeps}`.trim()) },
    ...choices,
  );
  if (choice === ALWAYS_SESSION) {
    return { approved: true, remember: 'session' };
  }
  if (choice === ALWAYS_WORKSPACE) {
    return { approved: true, remember: 'workspace' };
  }
  if (choice === PREFIX_SESSION) {
    return { approved: true, remember: 'session', prefix: true };
  }
  if (choice === PREFIX_WORKSPACE) {
    return { approved: true, remember: 'workspace', prefix: true };
  }
  return { approved: choice === ALLOW };
}

/** Where remembered answers are kept: the extension's SecretStorage. */
export interface AnswerSecrets {
  get(key: string): Thenable<string | undefined>;
  store(key: string, value: string): Thenable<void>;
}

/** The SecretStorage key of a remembered answer: the workspace and the server's key. */
export function rememberedAnswerKey(remember: string): string {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.toString() ?? '(no folder)';
  return `rein.askUser:${folder}:${remember}`;
}

export async function askUser(params: Partial<AskUserParams>, secrets?: AnswerSecrets): Promise<AskUserResult> {
  const key = params.remember && secrets ? rememberedAnswerKey(params.remember) : undefined;
  if (key && secrets) {
    const known = await secrets.get(key);
    if (known) {
      return { answer: known };
    }
  }
  const title = params.title?.trim() || vscode.l10n.t('Rein asks');
  const question = params.question ?? vscode.l10n.t('Rein has a question.');
  const options = Array.isArray(params.options) ? params.options.filter((o): o is string => typeof o === 'string') : [];
  const answer =
    options.length > 0
      ? await vscode.window.showQuickPick(options, { title, placeHolder: question, ignoreFocusOut: true })
      : await vscode.window.showInputBox({
          title,
          prompt: question,
          placeHolder: vscode.l10n.t('Your answer (Escape to decline)'),
          password: params.password === true,
          value: params.default,
          ignoreFocusOut: true,
        });
  if (key && secrets && answer) {
    await secrets.store(key, answer);
  }
  return { answer: answer ?? null };
}

export function registerDialogs(context: vscode.ExtensionContext, connection: ReinConnection): void {
  context.subscriptions.push(
    connection.onRequest(Methods.confirm, (params: Partial<ConfirmParams>) => confirmToolCall(params)),
    connection.onRequest(Methods.askUser, (params: Partial<AskUserParams>) => askUser(params, context.secrets)),
  );
}
