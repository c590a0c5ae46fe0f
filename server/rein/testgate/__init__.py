"""The tests gate: the project's tests that a run's changes can reach, run and judged."""
