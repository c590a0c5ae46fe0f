"""Flows: runs made of other Agent runs.

A wing of the core (it imports :mod:`rein.harness`, never the reverse):

* ``plan_act`` (its resumable state in ``plan_snapshot``, its tools in
  ``plan_tools``): plan mode, a Planner run that makes a plan and Executor
  runs that do it step by step;
* ``subagents``: a child Agent run inside the ``task`` tool's call (its
  run inside the call in ``subagent_run``, named kinds in ``subagent_kinds``).

Like the core it imports no pygls, lsprotocol, httpx, sqlite3 or watchfiles.
"""
