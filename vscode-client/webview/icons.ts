/** The panel's icons: small constant SVGs drawn with currentColor. */

const svg = (body: string): string =>
  `<svg viewBox="0 0 16 16" width="16" height="16" fill="none" stroke="currentColor" stroke-width="1.5" stroke-linecap="round" stroke-linejoin="round">${body}</svg>`;

export const ICONS = {
  chevron: svg('<path d="M6 4l4 4-4 4"/>'),
  check: svg('<path d="M3.5 8.5l3 3 6-7"/>'),
  pass: svg('<circle cx="8" cy="8" r="6"/><path d="M5.5 8.2l1.8 1.8 3.4-3.8"/>'),
  fail: svg('<circle cx="8" cy="8" r="6"/><path d="M6 6l4 4M10 6l-4 4"/>'),
  error: svg('<circle cx="8" cy="8" r="6"/><path d="M8 4.8v3.7M8 10.9v.1"/>'),
  warning: svg('<path d="M8 2.2l6.2 11H1.8z"/><path d="M8 6.5v3M8 11.4v.1"/>'),
  info: svg('<circle cx="8" cy="8" r="6"/><path d="M8 7.2v4M8 4.8v.1"/>'),
  spinner: svg('<path d="M8 2a6 6 0 1 1-6 6" />'),
  dots: svg('<path d="M4 8h.01M8 8h.01M12 8h.01" stroke-width="2.2"/>'),
  circle: svg('<circle cx="8" cy="8" r="5.5"/>'),
  diff: svg('<path d="M5 2.5v6M2 5.5h6M2.5 12h6M10.5 3.5h3v9h-3"/>'),
  wrench: svg('<path d="M10.5 2.5a3 3 0 0 0-3.2 4L2.8 11a1.4 1.4 0 0 0 2 2l4.5-4.5a3 3 0 0 0 4-3.2l-1.8 1.8-2-.4-.4-2z"/>'),
  tool: svg('<path d="M2.5 13.5l5-5M9 2.5l4.5 4.5-2.5 2.5L6.5 5z"/>'),
  list: svg('<path d="M6 4h7.5M6 8h7.5M6 12h7.5M2.5 4h.01M2.5 8h.01M2.5 12h.01" stroke-width="1.6"/>'),
  play: svg('<path d="M5 3.2l8 4.8-8 4.8z"/>'),
  plus: svg('<path d="M8 3v10M3 8h10"/>'),
  refresh: svg('<path d="M13 8a5 5 0 1 1-1.5-3.6M13 2.5v3h-3"/>'),
  send: svg('<path d="M2.5 8h9M8 4l4 4-4 4"/>'),
  queue: svg('<path d="M2.5 4.5h8M2.5 8h8M2.5 11.5h5M11.5 10v4M9.5 12h4"/>'),
  stop: svg('<rect x="4" y="4" width="8" height="8" rx="1"/>'),
  history: svg('<path d="M2.5 8a5.5 5.5 0 1 0 1.6-3.9M2.5 2.5v2.6h2.6M8 5v3.2l2.2 1.4"/>'),
  undo: svg('<path d="M5 3.5L2.5 6 5 8.5M2.5 6h6.5a4 4 0 0 1 0 8H6"/>'),
} as const;

export type IconName = keyof typeof ICONS;
