"""What a run costs: prices per model (:mod:`pricing`) and the run's
spend against its limits (:mod:`spend`)."""
