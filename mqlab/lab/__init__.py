"""The workbench layer: the ``Lab`` facade, inspectors, widgets and figures (DESIGN §4)."""

from mqlab.lab.lab import Lab

__all__ = ["Lab"]
