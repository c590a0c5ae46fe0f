"""What one workspace folder needs, whichever host serves it (``rein
serve``, ``rein run``, ``rein acp``): :class:`~rein.hosting.folder.FolderHost`
and its preview; :class:`~rein.hosting.workspace_host.WorkspaceHost`, a
folder on disk with the headless analyzers; and
:class:`~rein.hosting.headless.HeadlessSession`, one session over it. No
host's protocol is imported here (see docs/architecture.md)."""
