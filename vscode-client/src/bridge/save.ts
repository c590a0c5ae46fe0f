/**
 * `rein/saveDocuments`: Rein's edits arrive through workspace/applyEdit and
 * leave the documents dirty; the server asks to save them so that commands,
 * tests and the preview (which read the disk) see the change.
 */

import * as vscode from 'vscode';
import type { ReinConnection } from '../client';
import { Methods, type SaveDocumentsParams, type SaveDocumentsResult } from '../shared/protocol';

export async function saveDocuments(params: Partial<SaveDocumentsParams>): Promise<SaveDocumentsResult> {
  const saved: string[] = [];
  for (const uri of params.uris ?? []) {
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri);
    if (doc === undefined) {
      continue; // not open: the edit went to the file itself
    }
    if (!doc.isDirty || (await doc.save())) {
      saved.push(uri);
    }
  }
  return { saved };
}

export function registerSaveDocuments(context: vscode.ExtensionContext, connection: ReinConnection): void {
  context.subscriptions.push(
    connection.onRequest(Methods.saveDocuments, (params: Partial<SaveDocumentsParams>) => saveDocuments(params)),
  );
}
