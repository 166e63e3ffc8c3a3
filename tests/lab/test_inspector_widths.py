"""Inspector columns wide enough for what they show (issue 28, the walk of lesson 10).

Lesson 10's panel gave CID_RMQ_SYS_TRANS a column of 18 ``ch`` and Chromium drew it cut to
"CID_RMQ_SYS_TRA…": ``ch`` is the width of a "0" (7 px at the inspector's 11 px in DejaVu
Sans), the name's capitals are wider (10.86 em, 119.5 px), and the cell's 8 px of padding come
out of the column (118 px left). Here each cell the panel does not mark as cut (a cut one has
a ``title`` with its whole value) must fit its column by DejaVu Sans' own advance widths; the
browser tier measures the same cells in Chromium (tests/e2e/test_lessons_browser.py).
"""

from __future__ import annotations

import re
import struct
from html import unescape
from pathlib import Path

import pandas as pd
import pytest

from mqlab.lab.lessons import lesson10 as L
from mqlab.lab.panel_views import _table
from mqlab.lab.text_width import ZERO_EM, text_em

#: The inspector's font size and a cell's padding, left and right (panel_views' CSS).
FONT_PX, PAD_PX = 11, 8
DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


def _px(width: str) -> float:
    """A column width as the inspector writes it ("18ch" or "128px"), in px."""
    m = re.fullmatch(r"([\d.]+)(ch|px)", width)
    assert m is not None, width
    return float(m[1]) * (ZERO_EM * FONT_PX if m[2] == "ch" else 1)


def uncut_cells_that_do_not_fit(html: str) -> list[tuple[str, str, float, float]]:
    """(table title, text, text px, room px) of each cell without a title whose text is wider
    than its column less its padding."""
    bad = []
    for title, table in re.findall(r"<b>([^<]*)</b><table[^>]*>(.*?)</table>", html):
        widths = [_px(w) for w in re.findall(r'<col style="width:([^"]+)">', table)]
        for row in re.findall(r"<tr>(.*?)</tr>", table):
            cells = re.findall(r"<td( [^>]*)?>(.*?)</td>", row)
            if len(cells) != len(widths):
                continue  # the header, "none", "… N more rows"
            for (attrs, text), w in zip(cells, widths, strict=True):
                text = unescape(text)
                need = text_em(text) * FONT_PX
                if "title=" not in (attrs or "") and need > w - PAD_PX:
                    bad.append((unescape(title), text, round(need, 1), round(w - PAD_PX, 1)))
    return bad


def test_lesson10_inspector_shows_every_name_whole():
    lab = L.tx_lab(1)
    panel = L.transaction_panel(lab)
    panel.start_producer()
    panel.send_in_transaction()
    lab.advance(7000)
    panel.step_check()  # the check service's group now has offsets: a row to show
    html = panel.inspector.value
    assert "<td>CID_RMQ_SYS_TRANS</td>" in html
    assert uncut_cells_that_do_not_fit(html) == []


#: A table title's font size (px) and face: bold, JupyterLab's widget text size.
TITLE_PX = 13


def titles_that_do_not_fit(html: str) -> list[tuple[str, float, int]]:
    """(title, text px, box px) of each table whose bold title is wider than its box."""
    bad = []
    for width, title in re.findall(
        r'<div class="mqlab-table" style="[^"]*width:(\d+)px[^"]*"><b>([^<]*)</b>', html
    ):
        need = text_em(unescape(title), bold=True) * TITLE_PX
        if need > int(width) - 2:
            bad.append((unescape(title), round(need, 1), int(width) - 2))
    return bad


def test_lesson10_table_titles_fit_on_one_line():
    """Walk of issue 28: "queues of RMQ_SYS_TRANS_HALF_TOPIC" (296 px in 13 px DejaVu Sans
    Bold) wrapped over its table of 4 columns (235 px). A box is now as wide as its title,
    which the CSS keeps on one line at that size."""
    lab = L.tx_lab(1)
    panel = L.transaction_panel(lab)
    panel.start_producer()
    panel.send_in_transaction()
    html = panel.inspector.value
    assert "<b>queues of RMQ_SYS_TRANS_HALF_TOPIC</b>" in html
    assert titles_that_do_not_fit(html) == []
    assert f".mqlab-table>b{{font-size:{TITLE_PX}px;white-space:nowrap}}" in html
    assert 'width:299px;max-height:209px;overflow:auto"><b>queues of RMQ' in html  # 297 + 2


def test_a_yes_no_column_is_drawn_as_marks():
    """Walk 4 of issue 28: lesson 00's process queues said "dropped False" in every row; a
    bool is now ✔ or — (as lesson 12's commit-log table), numbers and names unchanged."""
    df = pd.DataFrame({"consumer": ["consumer-1", "consumer-2"], "msg_count": [0, 1],
                       "dropped": [False, True]})  # fmt: skip
    html = _table("process queues", df, ["consumer", "msg_count", "dropped"])
    assert "<tr><td>consumer-1</td><td>0</td><td>—</td></tr>" in html
    assert "<tr><td>consumer-2</td><td>1</td><td>✔</td></tr>" in html


def test_a_value_too_long_for_its_column_is_cut_and_whole_on_hover():
    df = pd.DataFrame({"group": ["CID_RMQ_SYS_TRANS", "W" * 40], "body": ["hello", "M" * 12],
                       "offset": [1234567, 1]})  # fmt: skip
    html = _table("t", df, ["group", "body", "offset"])
    assert uncut_cells_that_do_not_fit(html) == []
    assert f'title="{"W" * 40}"' in html  # a name past the cap is cut, whole on hover
    assert f'title="{"M" * 12}"' in html  # 12 capitals do not fit body's 12 digits
    assert "<td>hello</td>" in html and "<td>1234567</td>" in html


def _dejavu_advance_widths(path: Path) -> dict[str, float]:
    """Printable ASCII's advance widths (em) from a TrueType file's cmap (3,1 format 4) and
    hmtx tables."""
    d = path.read_bytes()
    tables = {}
    for i in range(struct.unpack(">H", d[4:6])[0]):
        tag, _sum, off, _len = struct.unpack(">4sIII", d[12 + 16 * i : 28 + 16 * i])
        tables[tag.decode()] = off
    upem = struct.unpack(">H", d[tables["head"] + 18 : tables["head"] + 20])[0]
    n_h = struct.unpack(">H", d[tables["hhea"] + 34 : tables["hhea"] + 36])[0]
    adv = [struct.unpack(">H", d[tables["hmtx"] + 4 * i : tables["hmtx"] + 4 * i + 2])[0]
           for i in range(n_h)]  # fmt: skip
    cmap = tables["cmap"]
    sub = next(
        cmap + off
        for pid, eid, off in (
            struct.unpack(">HHI", d[cmap + 4 + 8 * i : cmap + 12 + 8 * i])
            for i in range(struct.unpack(">H", d[cmap + 2 : cmap + 4])[0])
        )
        if (pid, eid) == (3, 1)
    )
    assert struct.unpack(">H", d[sub : sub + 2])[0] == 4
    seg2 = struct.unpack(">H", d[sub + 6 : sub + 8])[0]
    n = seg2 // 2
    ends = struct.unpack(f">{n}H", d[sub + 14 : sub + 14 + seg2])
    starts = struct.unpack(f">{n}H", d[sub + 16 + seg2 : sub + 16 + 2 * seg2])
    deltas = struct.unpack(f">{n}h", d[sub + 16 + 2 * seg2 : sub + 16 + 3 * seg2])
    range_at = sub + 16 + 3 * seg2
    ranges = struct.unpack(f">{n}H", d[range_at : range_at + seg2])

    def glyph(code: int) -> int:
        k = next(k for k in range(n) if starts[k] <= code <= ends[k])
        if ranges[k] == 0:
            return (code + deltas[k]) & 0xFFFF
        at = range_at + 2 * k + ranges[k] + 2 * (code - starts[k])
        return (struct.unpack(">H", d[at : at + 2])[0] + deltas[k]) & 0xFFFF

    return {chr(c): adv[min(glyph(c), n_h - 1)] / upem for c in range(32, 127)}


@pytest.mark.skipif(not DEJAVU.exists(), reason="DejaVu Sans is not installed (fonts-dejavu)")
def test_widths_are_dejavu_sans_own():
    font = _dejavu_advance_widths(DEJAVU)
    assert {c: text_em(c) for c in font} == font
    assert round(text_em("CID_RMQ_SYS_TRANS"), 3) == 10.861
    bold = _dejavu_advance_widths(DEJAVU.with_name("DejaVuSans-Bold.ttf"))
    assert {c: text_em(c, bold=True) for c in bold} == bold
    assert round(text_em("queues of RMQ_SYS_TRANS_HALF_TOPIC", bold=True), 3) == 22.775
    assert text_em("é", bold=True) == text_em("W", bold=True)  # outside the table: the widest


def test_inspector_rows_are_a_line_of_text_high():
    """An HTML widget's content inherits ipywidgets' line-height of 28 px (a button's height):
    lesson 00's tables tab drew its rows 28 px apart, 980 px tall in Chromium. The inspector
    sets its own, so a row (no vertical padding) is at most _ROW_PX (19 px) high."""
    lab = L.tx_lab(1)
    html = L.transaction_panel(lab).inspector.value
    m = re.search(r"\.mqlab-insp\{[^}]*line-height:([\d.]+)[;}]", html)
    assert m is not None, html[:300]
    assert FONT_PX * float(m[1]) <= 19
    assert re.search(r"\.mqlab-insp td\{padding:0 ", html)  # no vertical padding
