/**
 * A tool call's arguments as a person reads them: one `key: value` line per
 * argument, a string as its text (a multi-line one indented under its key,
 * not a JSON string full of \n), anything else as compact JSON. Pure.
 */

export function argsText(args: Record<string, unknown>): string {
  return Object.entries(args)
    .map(([key, value]) => {
      if (typeof value === 'string') {
        return value.includes('\n') ? `${key}:\n${value.replace(/^/gm, '  ')}` : `${key}: ${value}`;
      }
      if (value === undefined) {
        return `${key}: undefined`;
      }
      const compact = JSON.stringify(value);
      // A long object or list: pretty, one member per line (the block wraps).
      return `${key}: ${compact.length > 60 && typeof value === 'object' ? JSON.stringify(value, null, 2) : compact}`;
    })
    .join('\n');
}
