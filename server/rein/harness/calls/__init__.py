"""Tool calls inside a turn: running a turn's batch (:mod:`tool_calls`),
invoking one call (:mod:`invocation`), checking their arguments
(:mod:`arguments`), their results (:mod:`tool_result`) and their bounded
streamed updates (:mod:`tool_updates`)."""
