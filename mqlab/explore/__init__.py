"""Schedule exploration: every outcome of a small scenario, each with its shortest run.

``mqlab.explore.schedule`` (schedules), ``engine`` (the chooser, one run), ``state``
(the state digest), ``outcome`` (outcome classes), ``search`` (exhaustive, random walks,
replay, shrinking), ``scenarios`` (ready-made scenarios), ``runners`` (sequential, pool,
Spark), ``mutants`` (planted bugs for tests, re-exported from ``mqlab.common.mutants``,
where the core reads them: the core never imports this package). Imports stay lazy.
"""
