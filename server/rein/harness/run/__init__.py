"""One run of the agent loop: the loop itself, how a run ends, the hooks
and steering it hears at its boundaries, its gates and repair turns and what
it spends (:mod:`loop`, :mod:`_loop_exits`, :mod:`_loop_hooks`,
:mod:`_loop_repair`, :mod:`_loop_spend`), what a run takes and gives
(:mod:`run_types`), its record of every change (:mod:`run_record`), its
validation through the gates (:mod:`run_validation`), steering and
follow-ups (:mod:`steering`), resuming a waiting call (:mod:`_resume`), the
model's streamed turn (:mod:`streaming`), structured output
(:mod:`output`), and what keeps a run bounded: call supervision, the idle
watchdog and the tool-misuse breaker (:mod:`supervision`,
:mod:`watchdog`, :mod:`breaker`)."""
