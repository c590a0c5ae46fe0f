/**
 * `rein/saveDocuments`: Rein's edits arrive through workspace/applyEdit and
 * leave the documents dirty; the server asks to save them so that commands,
 * tests and the preview (which read the disk) see the change.
 *
 * Never the person's typing: a document that held unsaved changes of the
 * person's when Rein's edit arrived is left dirty (saving it would write
 * their half-typed text to disk), and the answer lists it under `unsaved`
 * so the server knows the disk is behind the buffer (it reads the buffer).
 */

import * as vscode from 'vscode';
import type { ReinConnection } from '../connection';
import { Methods, type SaveDocumentsParams, type SaveDocumentsResult } from '../shared/protocol';

/** The documents that held the person's unsaved changes when a Rein edit arrived. */
export class PersonEdits {
  private readonly held = new Set<string>();

  /** Before Rein's workspace/applyEdit: which of its documents are dirty with the person's changes. */
  beforeRein(uris: Iterable<string>): void {
    for (const uri of uris) {
      const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri);
      if (doc?.isDirty) {
        this.held.add(uri);
      } else {
        this.held.delete(uri);
      }
    }
  }

  /** The person saved (or reverted) the document: its buffer and the disk agree again. */
  settled(uri: string): void {
    this.held.delete(uri);
  }

  holds(uri: string): boolean {
    return this.held.has(uri);
  }
}

/** The document URIs a workspace/applyEdit touches (text edits and document changes). */
export function editedUris(edit: {
  changes?: Record<string, unknown> | undefined;
  documentChanges?: ({ textDocument?: { uri: string } } | { kind: string })[] | undefined;
}): string[] {
  const uris = new Set(Object.keys(edit.changes ?? {}));
  for (const change of edit.documentChanges ?? []) {
    if ('textDocument' in change && change.textDocument) {
      uris.add(change.textDocument.uri);
    }
  }
  return [...uris];
}

export async function saveDocuments(
  params: Partial<SaveDocumentsParams>,
  person: PersonEdits = new PersonEdits(),
): Promise<SaveDocumentsResult> {
  const saved: string[] = [];
  const unsaved: string[] = [];
  for (const uri of params.uris ?? []) {
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri);
    if (doc === undefined) {
      continue; // not open: the edit went to the file itself
    }
    if (doc.isDirty && person.holds(uri)) {
      unsaved.push(uri); // the person's unsaved typing is in it: theirs to save
      continue;
    }
    if (!doc.isDirty || (await doc.save())) {
      saved.push(uri);
    }
  }
  return unsaved.length ? { saved, unsaved } : { saved };
}

export function registerSaveDocuments(context: vscode.ExtensionContext, connection: ReinConnection, person: PersonEdits): void {
  context.subscriptions.push(
    connection.onRequest(Methods.saveDocuments, (params: Partial<SaveDocumentsParams>) => saveDocuments(params, person)),
    vscode.workspace.onDidSaveTextDocument((doc) => person.settled(doc.uri.toString())),
    vscode.workspace.onDidCloseTextDocument((doc) => person.settled(doc.uri.toString())),
  );
}
