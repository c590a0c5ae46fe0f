import type * as vscode from 'vscode';
import type { ReinConnection } from '../connection';
import { registerDiagnosticsBridge } from './diagnostics';
import { registerDialogs } from './dialogs';
import { registerNavigate } from './navigate';
import { type PersonEdits, registerSaveDocuments } from './save';

/** The editor side of the protocol: diagnostics, confirmations, questions, saves, navigation. */
export function registerEditorBridge(context: vscode.ExtensionContext, connection: ReinConnection, person: PersonEdits): void {
  registerDiagnosticsBridge(context, connection);
  registerDialogs(context, connection);
  registerSaveDocuments(context, connection, person);
  registerNavigate(context, connection);
}
