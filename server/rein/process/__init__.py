"""Child processes of Rein, for every host and tool: process groups that die
with the server and end as a whole (:mod:`rein.process.groups`), the gates'
command runner (:mod:`rein.process.runner`) and the preview's process
(:mod:`rein.process.preview`)."""

from rein.process.groups import OutputBuffer, dies_with_us, group_alive, kill_process_group
from rein.process.preview import SubprocessPreviewFactory
from rein.process.runner import SubprocessRunner

__all__ = [
    "OutputBuffer",
    "SubprocessPreviewFactory",
    "SubprocessRunner",
    "dies_with_us",
    "group_alive",
    "kill_process_group",
]
