"""The gates of a run, apart from any one analyzer: the gate protocol and
what a check gets and returns (:mod:`gate_types`), the pipeline, the
command and dependency gates and the repair prompt (:mod:`gates`), the
session's validation state (:mod:`validation`), the coordinators that wait
for fresh diagnostics and for installs (:mod:`coordinators`), and the path
globs gates and previews match (:mod:`path_globs`). The analyzer gate
itself is the :mod:`rein.analysis` wing."""
