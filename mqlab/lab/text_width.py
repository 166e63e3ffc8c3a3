"""How wide a line of text is drawn, in em, so that a table column can be given room for it.

Mirrors no RocketMQ class: this is the workbench's own layout helper (issue 28, the walk of
lesson 10: the inspector gave CID_RMQ_SYS_TRANS a column of 17 ``ch`` plus 1, and Chromium drew
it cut to "CID_RMQ_SYS_TRA…"; ``ch`` is the width of a "0", and most capitals are wider, and
the cell's 8 px of padding come out of its column).

The widths are the advance widths of DejaVu Sans Book (units of 1/2048 em, read from its
``hmtx`` table), the font Debian's Chromium draws JupyterLab's sans-serif text in and the
widest of the common ones (Helvetica, Arial and Segoe UI draw narrower), so a column as wide
as ``text_em`` of its values holds them in any of these. A character outside the table counts
as 1 em, the widest.

Owns: ``text_em``. Must not know: tables, widgets.
"""

from __future__ import annotations

#: Advance widths of DejaVu Sans Book in 1/2048 em, by the printable ASCII characters that
#: share each width.
_UNITS_BY_WIDTH = {
    563: "'", 569: "ijl", 604: "IJ", 651: ",. ", 690: "/:;\\|", 721: "f", 739: "-",
    799: "()[]", 803: "t", 821: "!", 842: "r", 942: '"', 1024: "*_`", 1067: "s", 1075: "z",
    1087: "?", 1126: "c", 1141: "L", 1178: "F", 1186: "k", 1212: "vxy", 1235: "P",
    1251: "TY", 1253: "o", 1255: "a", 1260: "e", 1294: "E", 1298: "hnu", 1300: "bdgpqS",
    1303: "0123456789${}", 1343: "K", 1401: "AV", 1403: "XZ", 1405: "B", 1423: "R",
    1430: "C", 1499: "U", 1532: "N", 1540: "H", 1577: "D", 1587: "G", 1597: "&", 1612: "OQ",
    1675: "w", 1716: "#+<=>^~", 1767: "M", 1946: "%", 1995: "m", 2025: "W", 2048: "@",
}  # fmt: skip
_EM = {c: units / 2048 for units, chars in _UNITS_BY_WIDTH.items() for c in chars}
#: The width of a "0", which CSS calls 1 ``ch``.
ZERO_EM = _EM["0"]


def text_em(text: str) -> float:
    """The width of ``text`` on one line, in em (DejaVu Sans Book; 1 em for a character
    outside printable ASCII)."""
    return sum(_EM.get(c, 1.0) for c in text)
