"""Per-lesson scaffolding: the helpers and exercises each notebook uses.

One module per notebook (``lesson04`` ↔ ``notebooks/04_long_polling.ipynb``), so a
notebook cell stays a call or two and the logic is tested here. Importing this package
imports every ``lessonNN`` module, which registers its exercises with ``mqlab.lab.check``.
"""

import importlib
import pkgutil

__all__: list[str] = []

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if _info.name.startswith("lesson"):
        importlib.import_module(f"{__name__}.{_info.name}")
        __all__.append(_info.name)
