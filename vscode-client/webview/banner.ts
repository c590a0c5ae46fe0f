/** The banner under the status line: the server's connection state when it is not running, with what to do about it. */

import * as l10n from '@vscode/l10n';
import type { ConnectionStateName } from '../src/shared/messages';
import { h, icon, inline } from './dom';

export type BannerCommand = 'showOutput' | 'openSettings' | 'restartServer' | 'manageTrust';

interface Banner {
  text: string;
  /** The text with the detail: the exit code, the restart delay, what is missing. */
  detailed?: (detail: string) => string;
  action?: { label: string; command: BannerCommand };
}

function bannerOf(state: ConnectionStateName): Banner | null {
  switch (state) {
    case 'running':
      return null;
    case 'stopped':
      return { text: l10n.t('The Rein server is stopped.'), action: { label: l10n.t('Start'), command: 'restartServer' } };
    case 'starting':
      return { text: l10n.t('Starting the Rein server…') };
    case 'restarting':
      return {
        text: l10n.t('The Rein server stopped'),
        detailed: (detail) => l10n.t('The Rein server stopped: {0}', detail),
        action: { label: l10n.t('Show output'), command: 'showOutput' },
      };
    case 'missing':
      return {
        text: l10n.t('The Rein server was not found.'),
        detailed: (detail) => l10n.t('The Rein server was not found: {0}', detail),
        action: { label: l10n.t('Open settings'), command: 'openSettings' },
      };
    case 'failed':
      return {
        text: l10n.t('The Rein server keeps stopping.'),
        detailed: (detail) => l10n.t('The Rein server keeps stopping: {0}', detail),
        action: { label: l10n.t('Restart'), command: 'restartServer' },
      };
    case 'untrusted':
      return {
        text: l10n.t('Rein starts its server and runs commands only in a trusted workspace.'),
        action: { label: l10n.t('Manage Workspace Trust'), command: 'manageTrust' },
      };
  }
}

/** Draws the banner of `state` into `el` (hidden while running); its button calls `onCommand`. */
export function fillBanner(el: HTMLElement, state: ConnectionStateName, detail: string | undefined, onCommand: (command: BannerCommand) => void): void {
  const info = bannerOf(state);
  el.replaceChildren();
  el.className = `banner state-${state}${info ? '' : ' hidden'}`;
  if (!info) {
    return;
  }
  const text = detail && info.detailed ? info.detailed(detail) : info.text;
  el.append(icon(state === 'starting' ? 'spinner' : 'warning', state === 'starting' ? 'spin' : ''), inline(text, 'banner-text'));
  el.title = detail ?? '';
  if (info.action) {
    const action = info.action;
    const button = h('button', { class: 'link-button' }, action.label);
    button.addEventListener('click', () => onCommand(action.command));
    el.append(button);
  }
}
