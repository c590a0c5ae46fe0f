"""The eval scenarios, by category. Importing this package registers them
all (see rein.evals)."""

from rein.evals.scenarios import agent, flows, gates, plan_resume, waiting

__all__ = ["agent", "flows", "gates", "plan_resume", "waiting"]
