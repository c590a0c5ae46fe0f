"""The analyzer gate, a wing of the core: it blocks on the diagnostics a
run introduced, never on those it found.

- :mod:`~rein.analysis.gate`: :class:`AnalyzerGate`, the gate itself (the verdict);
- :mod:`~rein.analysis.run_baselines`: what it judges against (the run-start
  snapshot, each changed file's and its importers' baselines) and how long
  they live;
- :mod:`~rein.analysis.background_snapshot`: the run-start snapshot, taken
  in the background and awaited by the first change and the verdict;
- :mod:`~rein.analysis.file_capture`: a changed file's own baseline,
  captured before its first change;
- :mod:`~rein.analysis.blocking`: which errors of a verdict's snapshot block;
- :mod:`~rein.analysis.verdict_text`: what a verdict says (its blockers,
  detail, and what it did not check);
- :mod:`~rein.analysis.baselines`: what "pre-existing" means (a file's
  diagnostics before its first change, matched through its line map);
- :mod:`~rein.analysis.command_baselines`: baselines, at the verdict, for
  the files a command changed (seen only after the fact);
- :mod:`~rein.analysis.counterfactual`: asking the analyzers about the
  workspace without the run's changes;
- :mod:`~rein.analysis.reach`: what the verdict could not see (files no
  analyzer covers, importers left unchecked);
- :mod:`~rein.analysis.blocker_order`: blockers ordered cause first.

It keeps the core's rules (no adapter, no protocol library) and the core
does not import it: hosts build it into a session's gate pipeline.
"""
