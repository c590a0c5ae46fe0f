"""The preview: the person's program, run by Rein and watched.

A wing of the core (it imports :mod:`rein.harness`, never the reverse):

* ``coordinator``: :class:`PreviewCoordinator`, which starts, reloads and
  stops the program behind the :class:`~rein.harness.ports.PreviewProcess`
  port;
* ``writes``: what it writes (the output mark at each workspace write, the
  files that are its own output);
* ``values``: what an operation did, what an observation saw, its status;
* ``gates``: the gates that use it (load, runtime observation, start);
* ``watch``: a start watched as the start gate watches it (the gate's and
  the editor's ``rein/preview`` start);
* ``output_log``: its output bookkeeping and error finding;
* ``observation``: its output watched for runtime errors after a load;
* ``process_life``: its process's output read, its exit noted, its stop;
* ``readiness``: when a start or reload is ready.

Which paths are code and which are the preview's output is configuration
(:mod:`rein.harness.gating.path_globs`). Like the core it imports no pygls,
lsprotocol, httpx, sqlite3 or watchfiles.
"""
