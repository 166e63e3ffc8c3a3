"""The planted bugs the explorer switches on: ``mqlab.common.mutants``, re-exported.

The flags live in ``mqlab.common.mutants`` so that the core reads them without importing
the explorer (docs/design.md §4). This module keeps the explorer's API:
``from mqlab.explore.mutants import mutant`` and ``mutants.ACTIVE`` are the same objects.
"""

from __future__ import annotations

from mqlab.common.mutants import ACTIVE, MUTANTS, active, mutant

__all__ = ["MUTANTS", "ACTIVE", "mutant", "active"]
