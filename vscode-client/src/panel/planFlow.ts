/**
 * Plan mode as the panel shows it. The server's plan-act flow
 * (server/rein/flows/plan_act.py) runs a planner, then an executor step by
 * step, then the planner again for a summary: each is a run of its own with
 * its own user message, and `submit_plan` / `complete_step` are tool calls.
 * The panel shows the person's task once, a divider where each step starts,
 * the plan box (updated in place) and one end for the whole plan. Pure.
 */

/** The plan-act flow's own tools: the plan box shows what they do. */
export const PLAN_TOOLS: ReadonlySet<string> = new Set(['submit_plan', 'complete_step']);

export type PlanPrompt =
  /** The planner's first prompt: the person's task. */
  | { kind: 'task'; text: string }
  /** The executor's prompt for one step. */
  | { kind: 'step'; index: number; total: number; stepId: string; description: string }
  /** The person's answer that resumes a waiting step. */
  | { kind: 'reply'; text: string }
  /** Anything else the flow says to its agents (a revision, the summary request). */
  | { kind: 'internal'; text: string };

const TASK = /^Task: ([\s\S]*?)\n\nMake the plan now and submit it with submit_plan\.\s*$/;
const STEP = /^Step (\d+) of (\d+) — (.+?): (.*)$/m;
const CONTINUE = /^([\s\S]*?)\n\n\(Continue step [\s\S]*\)\s*$/;
// The first message of a session carries the gathered context (server/rein/tools/bootstrap.py).
const CONTEXT =
  /^Context for this session \(gathered automatically\):\n\n<workspace[^>]*>[\s\S]*?\n<\/workspace>(?:\n\n<project_instructions[^>]*>[\s\S]*?\n<\/project_instructions>)?\n\n/;

/** What a user message of the flow (origin "prompt") is. */
export function planPrompt(content: string): PlanPrompt {
  const task = TASK.exec(content);
  if (task) {
    return { kind: 'task', text: (task[1] ?? '').replace(CONTEXT, '') };
  }
  const step = STEP.exec(content);
  if (step?.index === 0) {
    return {
      kind: 'step',
      index: Number(step[1]),
      total: Number(step[2]),
      stepId: step[3] ?? '',
      description: step[4] ?? '',
    };
  }
  const resumed = CONTINUE.exec(content);
  if (resumed) {
    return { kind: 'reply', text: resumed[1] ?? '' };
  }
  return { kind: 'internal', text: content };
}
