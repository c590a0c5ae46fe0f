/**
 * What the host sends the webview: after a reset every item, otherwise only
 * the items whose `rev` changed, plus the display order, the header and the
 * preview, MCP servers and approval rules sections when they changed.
 * Pure; the chat view and the webview test both use it.
 */

import type { HostMessage } from '../shared/messages';
import type { Item, ViewModel } from '../shared/viewModel';

export type UpdateMessage = Extract<HostMessage, { type: 'update' }>;

/** The items that are new or changed since `sent` (id -> rev), which it then records. */
export function changedItems(items: readonly Item[], sent: Map<string, number>): Item[] {
  const changed: Item[] = [];
  for (const item of items) {
    if (sent.get(item.id) !== item.rev) {
      changed.push(item);
      sent.set(item.id, item.rev);
    }
  }
  return changed;
}

export class UpdateBuilder {
  private readonly sent = new Map<string, number>();
  private lastOrder = '';
  private lastHeader = '';
  private lastPreviewRev = -1;
  private lastMcpRev = -1;
  private lastApprovalsRev = -1;
  private needsReset = true;

  /** The next update draws everything from scratch (a new webview, another session). */
  reset(): void {
    this.needsReset = true;
  }

  /** The update that brings the webview to `view`, or undefined when it already shows it. */
  next(view: ViewModel): UpdateMessage | undefined {
    const reset = this.needsReset;
    if (reset) {
      this.sent.clear();
      this.needsReset = false;
    }
    const changed = changedItems(view.items, this.sent);
    const order = view.items.map((item) => item.id);
    const orderKey = order.join(',');
    const headerKey = JSON.stringify(view.header);
    const previewChanged = reset || view.preview.rev !== this.lastPreviewRev;
    const mcpChanged = reset || view.mcp.rev !== this.lastMcpRev;
    const approvalsChanged = view.approvals !== undefined && (reset || view.approvals.rev !== this.lastApprovalsRev);
    if (!reset && changed.length === 0 && !previewChanged && !mcpChanged && !approvalsChanged && orderKey === this.lastOrder && headerKey === this.lastHeader) {
      return undefined;
    }
    if (orderKey !== this.lastOrder) {
      const live = new Set(order);
      for (const id of this.sent.keys()) {
        if (!live.has(id)) {
          this.sent.delete(id);
        }
      }
    }
    this.lastOrder = orderKey;
    this.lastHeader = headerKey;
    this.lastPreviewRev = view.preview.rev;
    this.lastMcpRev = view.mcp.rev;
    this.lastApprovalsRev = view.approvals?.rev ?? this.lastApprovalsRev;
    return {
      type: 'update',
      reset,
      header: view.header,
      order,
      items: changed,
      preview: previewChanged ? view.preview : undefined,
      mcp: mcpChanged ? view.mcp : undefined,
      approvals: approvalsChanged ? view.approvals : undefined,
    };
  }
}
