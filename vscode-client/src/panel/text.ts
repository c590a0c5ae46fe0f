/** Small text helpers of the reducer. Pure. */

import type { AssistantMessage } from '../shared/protocol';

/** The last `max` characters, marked with … when cut. */
export function tail(text: string, max: number): string {
  return text.length > max ? `…${text.slice(text.length - max + 1)}` : text;
}

/** "app.py" for "file:///home/me/proj/app.py". */
export function basename(uri: string): string {
  const path = decodeURIComponent(uri.replace(/^[a-z][\w+.-]*:\/\//i, ''));
  return path.slice(path.lastIndexOf('/') + 1) || path;
}

/** The text and the reasoning of an assistant message. */
export function assistantParts(message: AssistantMessage): { text: string; thinking: string } {
  let text = '';
  let thinking = '';
  for (const part of message.content ?? []) {
    if (part.type === 'text') {
      text += part.text;
    } else if (part.type === 'thinking') {
      thinking += part.thinking;
    }
  }
  return { text, thinking };
}

/**
 * Text for a notification (which shows no Markdown): code spans in quotes
 * instead of raw backticks (`nmae` -> 'nmae').
 */
export function plain(text: string): string {
  return text.replace(/(`+)([^`]+?)\1(?!`)/g, "'$2'").replace(/`/g, "'");
}
