/**
 * Messages between the extension host and the chat webview.
 * Shared by both sides: no imports but types.
 */

import type { Attachment, PreviewAction, PromptMode, ReviewDecision, SessionSummary, SlashCommand } from './protocol';
import type { IsolatedRowAction, IsolatedRunView } from './isolatedView';
import type { SetupView } from './setupView';
import type { ApprovalsView, Header, Item, McpView, PreviewView } from './viewModel';

export type ConnectionStateName = 'stopped' | 'starting' | 'running' | 'restarting' | 'missing' | 'untrusted' | 'failed';

export type HostMessage =
  | {
      type: 'update';
      /** Drop everything shown and draw `items` from scratch. */
      reset: boolean;
      header: Header;
      /** Every item id in display order (items not listed are removed). */
      order: string[];
      /** The items that are new or changed since the last update. */
      items: Item[];
      /** The preview section, when it changed (always after a reset). */
      preview?: PreviewView | undefined;
      /** The MCP servers section, when it changed (always after a reset). */
      mcp?: McpView | undefined;
      /** The approval rules section, when it changed (always after a reset). */
      approvals?: ApprovalsView | undefined;
    }
  | { type: 'sessions'; sessions: SessionSummary[]; current: string | null }
  | { type: 'connection'; state: ConnectionStateName; detail?: string | undefined }
  | { type: 'focusInput'; text?: string | undefined }
  /** What the person picked after `@`: shown as a chip by the prompt box until sent. */
  | { type: 'attachment'; label: string; attachments: Attachment[] }
  /** The model of the next turn (the picker button's text). */
  | { type: 'model'; label: string }
  /** The slash commands `/` lists (empty when the server has none or cannot say). */
  | { type: 'commands'; commands: SlashCommand[] }
  /** The isolated runs section (`rein/isolatedSessions`): every copy of the folder and what it can do. */
  | { type: 'isolated'; runs: IsolatedRunView[] }
  /** The setup view (`rein/setup`), asked when the section opens. */
  | { type: 'setup'; view: SetupView };

/** auto: a new prompt when idle, steering while a run is active; followUp: queued after the run. */
export type SendMode = 'auto' | 'followUp';

export type WebviewMessage =
  | { type: 'ready' }
  /** runMode: how a new prompt runs (the toggle by the prompt box); steering and follow-ups ignore it. */
  | { type: 'send'; text: string; mode: SendMode; runMode: PromptMode; attachments?: Attachment[] | undefined }
  /** `@` typed in the prompt box: the extension shows the context picker. */
  | { type: 'mention' }
  /** `/` typed as the prompt's first character: the extension asks the server for the commands. */
  | { type: 'listCommands' }
  | { type: 'preview'; action: Exclude<PreviewAction, 'status'> }
  | { type: 'abort' }
  | { type: 'newSession' }
  /** Start an isolated session: its own copy of the folder; the next prompt runs there. */
  | { type: 'newIsolated' }
  /** An isolated run's button (see IsolatedRowAction). */
  | { type: 'isolatedAction'; sessionId: string; action: IsolatedRowAction }
  /** Keep or undo one hunk of an isolated run under review (applied later by "Apply kept"). */
  | { type: 'isolatedHunk'; sessionId: string; hunk: string; keep: boolean }
  /** The setup view was opened or its refresh pressed: the host asks `rein/setup`. */
  | { type: 'refreshSetup' }
  /** The model picker button: choose the model of the next turn. */
  | { type: 'pickModel' }
  | { type: 'selectSession'; sessionId: string }
  | { type: 'refreshSessions' }
  | { type: 'openDiff'; itemId: string }
  /**
   * A checkpoint row's action: undo the run, restore to before a turn,
   * restore one file, open a file's diff (before the run or turn ↔ now),
   * compare a conflict of the last restore.
   */
  | {
      type: 'checkpoint';
      action: 'undoRun' | 'restoreTurn' | 'restoreFile' | 'openDiff' | 'compare';
      runId: string;
      turn?: number | undefined;
      path?: string | undefined;
    }
  /** Keep or Undo under review: the run (no path), a file (no hunk) or a hunk. */
  | { type: 'review'; runId: string; decision: ReviewDecision; path?: string | undefined; hunk?: number | undefined }
  | { type: 'openFile'; path: string; line?: number | undefined; character?: number | undefined }
  | { type: 'openLink'; href: string }
  /** Continue after a budget stop: the host sends the follow-up prompt "continue". */
  | { type: 'continueRun' }
  /** Revoke an approval rule ("Always allow") by its id. */
  | { type: 'revokeApproval'; id: string }
  | { type: 'command'; command: 'showOutput' | 'openSettings' | 'restartServer' | 'setApiKey' | 'manageTrust' };
