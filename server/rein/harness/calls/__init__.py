"""Tool calls inside a turn: running them (:mod:`tool_calls`), checking
their arguments (:mod:`arguments`), their results (:mod:`tool_result`) and
their bounded streamed updates (:mod:`tool_updates`)."""
