"""The tests gate, a wing of the core: it runs the project's tests the
run's changes reach and blocks only on the tests the run broke.

- :mod:`~rein.testgate.gate`: :class:`TestGate`, the gate itself (earlier
  texts, the run, the re-run, the baseline run, the verdict);
- :mod:`~rein.testgate.overlays`: the changed files' texts the shadows
  hold (as the workspace port has them now, as they were before the run);
- :mod:`~rein.testgate.shadow`: the throwaway copy of the workspace the
  tests run in (the changed files as the workspace port has them, or as
  they were before the run);
- :mod:`~rein.testgate.shadow_runs`: a verdict's runs in the gate's two
  kept shadow trees (warm or cold, timed), the re-run beside the baseline
  run, what they recorded indexed after the verdict;
- :mod:`~rein.testgate.runner`: one run of pytest or a configured runner,
  read from its report;
- :mod:`~rein.testgate.pytest_run`: pytest's command line in a shadow and
  its own reports read back (a plugin writing them as JSON lines);
- :mod:`~rein.testgate.junit`: a configured runner's JUnit XML report read
  into test results, tracebacks cut to the workspace's frames;
- :mod:`~rein.testgate.report`: the blockers and the verdict's detail;
- :mod:`~rein.testgate.detect`: whether a project has pytest tests (the
  selection's test files) and pytest-xdist;
- :mod:`~rein.testgate.selection`: which test files a change reaches,
  over :mod:`~rein.testgate.import_graph`, the project's import graph
  name by name;
- :mod:`~rein.testgate.narrow`: of those files, the tests naming what the
  change reaches (per-test selection), when that can be told, over
  :mod:`~rein.testgate.narrow_units`, a module's definitions and the lines
  a change touches;
- :mod:`~rein.testgate.pycache`: where its pytest keeps compiled modules,
  and which of them must go;
- :mod:`~rein.testgate.warm`: a kept process with pytest imported that
  forks each run (through its :class:`~rein.testgate.warm.ProcessLauncher`
  port), handed to it by the gate itself (:mod:`~rein.testgate.direct`,
  a run as data: :mod:`~rein.testgate.pytest_call`) or by its client.

It keeps the core's rules (no adapter, no protocol library) and the core
does not import it: hosts build it into a session's gate pipeline; a
command runs through the gates' ``CommandRunner`` port.
"""
