"""Checkpoints: what each run changed, and what can be done with it.

A wing of the core (it imports :mod:`rein.harness`, never the reverse):

* ``model``: the checkpoint model and the :class:`CheckpointStore` port;
* ``capture``: fills the store as a run changes files;
* ``views``: what ``rein/checkpoints`` and ``rein/checkpointContent`` show;
* ``restore`` (values in ``restore_types``): puts a run's files back;
* ``review`` (values in ``review_types``, one decision in ``_review_batch``,
  line hunks in ``hunks``): keeps or undoes a run's changes, file by file
  and hunk by hunk.

Like the core it imports no pygls, lsprotocol, httpx, sqlite3 or watchfiles.
"""
