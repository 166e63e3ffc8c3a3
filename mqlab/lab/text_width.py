"""How wide a line of text is drawn, in em, so that a table column can be given room for it.

Mirrors no RocketMQ class: this is the workbench's own layout helper (issue 28, the walk of
lesson 10: the inspector gave CID_RMQ_SYS_TRANS a column of 17 ``ch`` plus 1, and Chromium drew
it cut to "CID_RMQ_SYS_TRA…"; ``ch`` is the width of a "0", and most capitals are wider, and
the cell's 8 px of padding come out of its column).

The widths are the advance widths of DejaVu Sans Book (units of 1/2048 em, read from its
``hmtx`` table), the font Debian's Chromium draws JupyterLab's sans-serif text in and the
widest of the common ones (Helvetica, Arial and Segoe UI draw narrower), so a column as wide
as ``text_em`` of its values holds them in any of these. A character outside the table counts
as the widest (1 em in Book). ``bold=True`` measures with DejaVu Sans Bold's widths.

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
#: The same for DejaVu Sans Bold, the font of a table's ``<b>`` title (walk of issue 28: lesson
#: 10's "queues of RMQ_SYS_TRANS_HALF_TOPIC" wrapped over its narrower table).
_BOLD_UNITS_BY_WIDTH = {
    627: "'", 702: "ijl", 713: " ", 748: "/\\|", 762: "IJ", 778: ",.", 819: ":;", 850: "-",
    891: "f", 934: "!", 936: "()[]", 979: "t", 1010: "r", 1024: "_`", 1067: '"', 1071: "*",
    1188: "?", 1192: "z", 1214: "c", 1219: "s", 1305: "L", 1321: "x", 1335: "vy", 1362: "k",
    1382: "a", 1389: "e", 1397: "T", 1399: "EF", 1407: "o", 1425: "$0123456789", 1458: "hnu{}",
    1466: "bdgpq", 1475: "S", 1483: "Y", 1485: "Z", 1501: "P", 1503: "C", 1561: "B", 1577: "R",
    1579: "X", 1585: "AV", 1587: "K", 1663: "U", 1681: "G", 1700: "D", 1714: "HN",
    1716: "#+<=>^~", 1741: "OQ", 1786: "&", 1892: "w", 2038: "M", 2048: "@", 2052: "%",
    2134: "m", 2259: "W",
}  # fmt: skip
_EM = {c: units / 2048 for units, chars in _UNITS_BY_WIDTH.items() for c in chars}
_BOLD_EM = {c: units / 2048 for units, chars in _BOLD_UNITS_BY_WIDTH.items() for c in chars}
#: The width of a "0", which CSS calls 1 ``ch``.
ZERO_EM = _EM["0"]


def text_em(text: str, *, bold: bool = False) -> float:
    """The width of ``text`` on one line, in em (DejaVu Sans Book, or Bold; a character
    outside printable ASCII counts as the font's widest)."""
    widths = _BOLD_EM if bold else _EM
    widest = max(widths.values())
    return sum(widths.get(c, widest) for c in text)
