"""``rein bench``: measured costs of the harness; figures go to docs/performance.md.

One module per thing measured:

* :mod:`rein.bench.cli`: the ``rein bench`` dispatcher and the row printer;
* :mod:`rein.bench.core`: the loop (scripted turns);
* :mod:`rein.bench.tools`: the fixed tool ``core`` measures with;
* :mod:`rein.bench.providers`: SSE chunks parsed per second;
* :mod:`rein.bench.gates`: the analyzer gate's wait after the last diagnostics;
* :mod:`rein.bench.gates_corpus` and :mod:`rein.bench.corpus`: the gates on
  real projects (``rein bench gates --corpus``) and those projects, scored by
  :mod:`rein.bench.gates_scores`;
* :mod:`rein.bench.checkpoints`: what capturing checkpoints adds to an edit;
* :mod:`rein.bench.lsp`: ``rein serve`` over stdio, and under load;
* :mod:`rein.bench.acp`: ``rein acp`` to its ``initialize`` result.

Measurement, not part of any host: only :mod:`rein.cli` imports this package.
"""
