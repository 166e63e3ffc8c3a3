"""Per-lesson scaffolding: the helpers and exercises each notebook uses.

One module per notebook (``lesson04`` ↔ ``notebooks/04_long_polling.ipynb``), so a
notebook cell stays a call or two and the logic is tested here. Importing this package
registers every lesson's exercises with ``mqlab.lab.check``.
"""

from mqlab.lab.lessons import lesson04  # noqa: F401

__all__ = ["lesson04"]
