/**
 * When to restart a crashed server: after 1 s, 2 s, 4 s, ... (capped), and
 * not at all after `maxQuickCrashes` crashes in a row that each came before
 * the server had run `stableAfterMs`. Pure: the caller passes the clock.
 */

/** Delay before restart number `attempt` (1-based): 1 s, 2 s, 4 s, ... capped. */
export function backoffMs(attempt: number, baseMs = 1000, capMs = 30_000): number {
  return Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
}

export type CrashDecision = { giveUp: true; crashes: number } | { giveUp: false; crashes: number; delayMs: number };

export class RestartPolicy {
  private crashes = 0;
  private startedAt: number | undefined;

  constructor(
    readonly maxQuickCrashes = 5,
    private readonly stableAfterMs = 60_000,
    private readonly baseMs = 1000,
  ) {}

  /** The server is up (initialized). */
  started(now: number): void {
    this.startedAt = now;
  }

  /** The person restarted it: count from zero again. */
  reset(): void {
    this.crashes = 0;
    this.startedAt = undefined;
  }

  crashed(now: number): CrashDecision {
    const uptime = this.startedAt === undefined ? 0 : now - this.startedAt;
    this.crashes = uptime >= this.stableAfterMs ? 1 : this.crashes + 1;
    this.startedAt = undefined;
    if (this.crashes >= this.maxQuickCrashes) {
      return { giveUp: true, crashes: this.crashes };
    }
    return { giveUp: false, crashes: this.crashes, delayMs: backoffMs(this.crashes, this.baseMs) };
  }
}
