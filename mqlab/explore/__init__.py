"""Schedule exploration: every outcome of a small scenario, each with its shortest run.

``mqlab.explore.schedule`` (schedules), ``engine`` (the chooser, one run), ``state``
(the state digest), ``outcome`` (outcome classes), ``search`` (exhaustive, random walks,
replay, shrinking), ``scenarios`` (ready-made scenarios), ``runners`` (sequential, pool,
Spark), ``mutants`` (planted bugs for tests). Imports stay lazy: the core imports
``mqlab.explore.mutants`` for its one-line checks.
"""
