"""disk adapters: the disk workspace, the file watcher, the analyzer
language servers and import graphs (see docs/architecture.md)."""
