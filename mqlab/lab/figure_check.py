"""The figure check: six rules a figure must pass before a teacher projects it (issue 28).

Mirrors no RocketMQ class: this is the workbench's own quality gate over its plotly figures.
``check_figure(fig)`` reads a figure's JSON (``to_plotly_json``: a ``go.Figure``, a
``FigureWidget`` or the dict itself) and returns the ``Problem`` s it finds, one per broken
rule and place; ``figures_of(obj)`` finds the figures a lesson object draws (a figure, a
control panel's timeline, the run explorer's and the outcome explorer's figures).
tests/lab/test_figure_check.py runs it over every figure the lessons and panels draw.

The rules (``RULES``), each read from the JSON alone:

``legend``
    Every colour a trace draws is explained: it is the colour of a trace shown in a legend
    that is shown, or the title or an annotation names its hue ("green passed"), or the
    figure draws one colour only (then colour means nothing). A heatmap drawn in colours
    leaves no cell empty (None), unless a caption says "empty" or "blank": an empty cell
    shows the background, a colour no legend explains.
``translucent-overlap``
    No translucent bar (trace or marker opacity < 1) overlaps another bar in the same axes,
    of the same series or another: the blend is a colour no legend shows, and the count
    under it is lost.
``integer-ticks``
    A linear axis whose data are all whole numbers has ticks that are whole numbers: a
    whole-number ``dtick`` (or whole-number ``tickvals``), and for values of 10 000 or more a
    ``tickformat`` of ``d`` (plotly's default writes 10020 as "10.02k").
``title``
    The title fits the figure (estimated: characters × 0.55 × font size against the width
    from the title's x to the right edge, ``DEFAULT_WIDTH`` px when the figure sets none),
    lies in the top margin, and clears the modebar (the toolbar in the top ``MODEBAR_PX``
    px of the right ``MODEBAR_WIDTH_PX`` px). ``figures.house_style`` places titles so.
``hidden-trace``
    No line trace lies wholly under a later one (every segment of its path on the later
    trace's path, which is solid and at least as wide) unless markers of its own show it;
    no markers-only trace lies wholly under the filled markers, at least as big, of a later
    trace, nor (unfilled) on filled ones of its own colour (``MARKER_NEAR``).
``clipped-marker``
    No marker sits on the edge of an axis range the figure fixes (within ``EDGE_NEAR`` of
    its span) when the range holds all the trace's points: plotly clips it in half there
    (lessons 01, 03, 07 and 10's timelines drew their first and last events as half dots).
    A trace with points outside the range is shown through a zoomed window (the panel's
    timeline), whose edges may cut what lies on them.

Owns: the rules and the geometry they estimate. Must not know: what a lesson shows.
"""

from __future__ import annotations

import base64
import colorsys
import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Problem", "RULES", "check_figure", "figures_of", "figure_json", "hue_names",
           "title_box", "whole_number_axes", "DEFAULT_WIDTH", "EDGE_NEAR", "MODEBAR_PX",
           "MODEBAR_WIDTH_PX"]  # fmt: skip

RULES = ("legend", "translucent-overlap", "integer-ticks", "title", "hidden-trace",
         "clipped-marker")  # fmt: skip
#: The width (px) a figure that sets none is drawn at: a notebook column on a laptop.
DEFAULT_WIDTH = 800
DEFAULT_HEIGHT = 450
#: The modebar's band: the top 30 px of the figure's right 270 px (its ten buttons).
MODEBAR_PX, MODEBAR_WIDTH_PX = 30, 270
#: Estimated width of one character, as a share of the font size.
CHAR_EM = 0.55
_DEFAULT_MARGIN = {"l": 80, "r": 80, "t": 100, "b": 80}
_PLOTLY_COLORWAY = ["#636efa", "#EF553B", "#00cc96", "#ab63fa", "#FFA15A", "#19d3f3",
                    "#FF6692", "#B6E880", "#FF97FF", "#FECB52"]  # fmt: skip


@dataclass(frozen=True)
class Problem:
    """One broken rule: which rule, in which figure, and where."""

    rule: str
    figure: str
    detail: str

    def __str__(self) -> str:
        return f"{self.figure}: [{self.rule}] {self.detail}"


# -- reading the JSON ------------------------------------------------------------------------
def _plain(v: Any) -> Any:
    """Numpy arrays, tuples and plotly's typed arrays ({dtype, bdata}) as plain lists."""
    if isinstance(v, dict):
        if set(v) >= {"dtype", "bdata"}:
            arr = np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
            if "shape" in v:
                arr = arr.reshape([int(s) for s in str(v["shape"]).split(",")])
            return arr.tolist()
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, np.generic):
        return v.item()
    return v


def figure_json(fig: Any) -> dict[str, Any]:
    """``{"data": [...], "layout": {...}}`` of a Figure, FigureWidget or figure dict."""
    if isinstance(fig, dict):
        d = fig
    elif hasattr(fig, "to_plotly_json"):
        d = fig.to_plotly_json()
    else:
        raise TypeError(f"fig must be a plotly figure or its dict, got {type(fig).__name__}")
    d = _plain(d)
    return {"data": list(d.get("data") or []), "layout": dict(d.get("layout") or {})}


def _get(d: Any, path: str, default: Any = None) -> Any:
    for key in path.split("."):
        if not isinstance(d, dict) or key not in d:
            return default
        d = d[key]
    return default if d is None else d


def _template_layout(layout: dict) -> dict:
    t = layout.get("template")
    if isinstance(t, dict) and isinstance(t.get("layout"), dict):
        return t["layout"]
    import plotly.io as pio

    name = t if isinstance(t, str) else pio.templates.default
    try:
        return _plain(pio.templates[name].layout.to_plotly_json())
    except (KeyError, ValueError):
        return {}


def _layout_value(layout: dict, path: str, default: Any = None) -> Any:
    v = _get(layout, path)
    return v if v is not None else _get(_template_layout(layout), path, default)


def _list(v: Any) -> list:
    if v is None:
        return []
    return v if isinstance(v, list) else [v]


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return None if isinstance(v, float) and math.isnan(v) else float(v)
    return None


def _axis_key(ref: str | None, letter: str) -> str:
    """A trace's ``xaxis: "x2"`` → the layout key ``xaxis2``."""
    ref = ref or letter
    return f"{letter}axis{ref[1:]}"


def _trace_axes(tr: dict) -> tuple[str, str]:
    return _axis_key(tr.get("xaxis"), "x"), _axis_key(tr.get("yaxis"), "y")


# -- colours ---------------------------------------------------------------------------------
_NAMED = {"black": "#000000", "white": "#ffffff", "grey": "#808080", "gray": "#808080",
          "red": "#ff0000", "green": "#008000", "blue": "#0000ff", "orange": "#ffa500",
          "purple": "#800080", "brown": "#a52a2a", "teal": "#008080", "lightgrey": "#d3d3d3",
          "darkgrey": "#a9a9a9"}  # fmt: skip


def _rgb(color: str) -> tuple[int, int, int] | None:
    c = color.strip().lower()
    c = _NAMED.get(c, c)
    if re.fullmatch(r"#[0-9a-f]{6}", c):
        return int(c[1:3], 16), int(c[3:5], 16), int(c[5:7], 16)
    if re.fullmatch(r"#[0-9a-f]{3}", c):
        return tuple(int(ch * 2, 16) for ch in c[1:])  # type: ignore[return-value]
    m = re.fullmatch(r"rgba?\(([^)]*)\)", c)
    if m:
        parts = [p.strip() for p in m[1].split(",")]
        return tuple(int(float(p)) for p in parts[:3])  # type: ignore[return-value]
    return None


def _norm(color: str) -> str:
    """One spelling per colour: ``#rrggbb``."""
    rgb = _rgb(color)
    return color.strip().lower() if rgb is None else "#{:02x}{:02x}{:02x}".format(*rgb)


def hue_names(color: str) -> set[str]:
    """The words a caption may use for ``color``: "grey" for greys, else its hue's names
    ("red", "orange", "brown" for a dark orange or red, "green", "blue", "purple", ...)."""
    rgb = _rgb(color)
    if rgb is None:
        return {color.strip().lower()}
    h, light, s = colorsys.rgb_to_hls(*(c / 255 for c in rgb))
    v = max(rgb) / 255
    if s < 0.15 or max(rgb) - min(rgb) < 30:
        names = {"grey", "gray"}
        if v < 0.2:
            names.add("black")
        if light > 0.95:
            names.add("white")
        return names
    deg = h * 360
    bands = ((15, {"red"}), (45, {"orange"}), (70, {"yellow", "khaki"}), (165, {"green"}),
             (200, {"teal", "cyan", "turquoise"}), (255, {"blue"}), (290, {"purple", "violet"}),
             (345, {"pink", "magenta", "purple"}), (361, {"red"}))  # fmt: skip
    names = next(n for top, n in bands if deg < top)
    if (deg < 45 or deg >= 345) and v < 0.65:
        names = names | {"brown"}
    return set(names)


def _colorway(layout: dict) -> list[str]:
    return list(_layout_value(layout, "colorway") or _PLOTLY_COLORWAY)


def _scale_color(scale: list, pos: float) -> str | None:
    """The colour a piecewise colourscale gives at ``pos`` (0..1): the stop at or below it."""
    best = None
    for stop, color in scale:
        if float(stop) <= pos + 1e-9:
            best = color
    return best if best is not None else (scale[0][1] if scale else None)


def _trace_colors(tr: dict, index: int, layout: dict) -> list[str]:
    """The colours a trace draws (normalised), nothing for a trace without data."""
    kind = tr.get("type") or "scatter"
    if tr.get("visible") is False or tr.get("visible") == "legendonly":
        return []
    default = _colorway(layout)[index % len(_colorway(layout))]
    if kind == "heatmap":
        if tr.get("showscale", True):
            return []  # the colour bar explains it
        z = [v for row in _list(tr.get("z")) for v in _list(row) if _num(v) is not None]
        scale = tr.get("colorscale")
        if not z or not isinstance(scale, list):
            return []
        lo = _num(tr.get("zmin")) if tr.get("zmin") is not None else min(z)
        hi = _num(tr.get("zmax")) if tr.get("zmax") is not None else max(z)
        span = (hi - lo) or 1.0
        return sorted({_norm(_scale_color(scale, (v - lo) / span)) for v in z})
    if kind in ("bar", "histogram"):
        if not _has_data(tr):
            return []
        c = _get(tr, "marker.color", default)
        return sorted({_norm(x) for x in _list(c) if isinstance(x, str)})
    if kind in ("scatter", "scattergl"):
        if not _has_data(tr):
            return []
        mode = tr.get("mode") or ("lines+markers" if len(_list(tr.get("x"))) < 20 else "lines")
        line = _get(tr, "line.color")
        out: set[str] = set()
        if "lines" in mode:
            out.add(_norm(line or default))
        if "markers" in mode:
            mc = _get(tr, "marker.color", line or default)
            out |= {_norm(x) for x in _list(mc) if isinstance(x, str)}
        return sorted(out)
    return []


def _has_data(tr: dict) -> bool:
    vals = _list(tr.get("x")) + _list(tr.get("y"))
    return any(v is not None for v in vals)


def _legend_shown(data: list[dict], layout: dict) -> bool:
    if layout.get("showlegend") is not None:
        return bool(layout["showlegend"])
    entries = [t for t in data if _in_legend_entry(t)]
    return len(entries) > 1


def _in_legend_entry(tr: dict) -> bool:
    if tr.get("visible") is False:
        return False
    default = (tr.get("type") or "scatter") != "heatmap"
    return bool(tr.get("showlegend", default))


def _captions(layout: dict) -> str:
    texts = [_title_text(layout)]
    texts += [str(a.get("text") or "") for a in _list(layout.get("annotations"))]
    return " ".join(texts).lower()


def _check_legend(d: dict, name: str) -> list[Problem]:
    data, layout = d["data"], d["layout"]
    drawn = [(i, t, _trace_colors(t, i, layout)) for i, t in enumerate(data)]
    shapes = [_norm(s["line"]["color"]) for s in _list(layout.get("shapes"))
              if isinstance(_get(s, "line.color"), str)]  # fmt: skip
    every = {c for _, _, cs in drawn for c in cs} | set(shapes)
    legend = set()
    if _legend_shown(data, layout):
        for i, t in enumerate(data):
            if _in_legend_entry(t):
                mc = _get(t, "marker.color") or _get(t, "line.color")
                if mc is None:
                    mc = _colorway(layout)[i % len(_colorway(layout))]
                legend |= {_norm(x) for x in _list(mc) if isinstance(x, str)}
    words = set(re.findall(r"[a-z]+", _captions(layout)))
    out = []
    named = _get(layout, "legend.title.text")
    if named and not _legend_shown(data, layout) and any(cs for _, _, cs in drawn):
        out.append(Problem("legend", name, f"the legend is titled {named!r} but not shown: "
                           "a single trace hides plotly's legend unless showlegend is set"))  # fmt: skip
    if len(every) <= 1:
        return out  # one colour: it tells nothing apart
    for i, t, colors in drawn:
        for c in colors:
            if c not in legend and not hue_names(c) & words:
                out.append(Problem("legend", name, f"trace {i} ({t.get('name') or t.get('type')})"
                                   f" draws {c}, which no legend entry or caption explains"))  # fmt: skip
    for c in sorted(set(shapes)):
        if c not in legend and not hue_names(c) & words:
            out.append(Problem("legend", name, f"a shape draws {c}, which nothing explains"))
    for i, t, colors in drawn:
        gaps = _heatmap_gaps(t) if colors else (0, 0)
        if gaps[0] and not words & {"empty", "blank"}:
            out.append(Problem("legend", name, f"trace {i} ({t.get('name') or 'heatmap'}) "
                               f"leaves {gaps[0]} of {gaps[1]} cells empty: they show the "
                               "background, which no legend entry or caption explains"))  # fmt: skip
    return out


def _heatmap_gaps(tr: dict) -> tuple[int, int]:
    """(empty cells, cells) of a heatmap: a None or NaN value draws no cell, and the plot's
    background shows through it (lesson 00's allocation heatmap drew a queue nobody held
    so, in the background's colour, with no legend entry)."""
    if (tr.get("type") or "scatter") != "heatmap":
        return 0, 0
    cells = [v for row in _list(tr.get("z")) for v in _list(row)]
    return sum(_num(v) is None for v in cells), len(cells)


# -- translucent overlaps --------------------------------------------------------------------
def _opacity(tr: dict) -> float:
    o = _num(tr.get("opacity"))
    m = _get(tr, "marker.opacity")
    mo = min((_num(x) for x in _list(m) if _num(x) is not None), default=1.0)
    return (1.0 if o is None else o) * mo


def _per_point(v: Any, n: int, default: Any) -> list:
    if isinstance(v, list):
        return [default if x is None else x for x in v] + [default] * (n - len(v))
    return [default if v is None else v] * n


def _bar_rects(data: list[dict], layout: dict) -> list[tuple[int, str, float, float, float, float]]:
    """(trace, axes, pos0, pos1, val0, val1) for every bar of every bar/histogram trace."""
    barmode = layout.get("barmode") or "group"
    cats: dict[str, dict[str, int]] = {}
    rects = []
    for i, t in enumerate(data):
        kind = t.get("type")
        if kind not in ("bar", "histogram") or t.get("visible") is False:
            continue
        xa, ya = _trace_axes(t)
        horizontal = t.get("orientation") == "h"
        pos_axis = ya if horizontal else xa
        key = f"{xa}/{ya}"
        if kind == "histogram":
            rects += [(i, key, *r) for r in _histogram_rects(t, horizontal)]
            continue
        pos = _list(t.get("y" if horizontal else "x"))
        size = _list(t.get("x" if horizontal else "y"))
        n = min(len(pos), len(size))
        if n == 0:
            continue
        if any(isinstance(p, str) for p in pos):
            order = cats.setdefault(pos_axis, {})
            for c in _list(_get(layout, f"{pos_axis}.categoryarray")):
                order.setdefault(str(c), len(order))
            pnum = []
            for p in pos[:n]:
                order.setdefault(str(p), len(order))
                pnum.append(float(order[str(p)]))
            step = 1.0
        else:
            pnum = [float(p) if _num(p) is not None else math.nan for p in pos[:n]]
            distinct = sorted({p for p in pnum if not math.isnan(p)})
            step = min((b - a for a, b in zip(distinct, distinct[1:], strict=False)), default=1.0)
        width = _per_point(t.get("width"), n, 0.8 * step)
        offset = t.get("offset")
        if offset is None and barmode == "group":
            continue  # plotly sets grouped traces side by side: one trace's own bars only
        offs = _per_point(offset, n, None)
        base = _per_point(t.get("base"), n, 0)
        for p, s, w, o, b in zip(pnum, size[:n], width, offs, base, strict=True):
            if math.isnan(p) or _num(s) is None or _num(b) is None:
                continue
            o = -float(w) / 2 if o is None else float(o)
            v0, v1 = sorted((float(b), float(b) + float(s)))
            rects.append((i, key, p + o, p + o + float(w), v0, v1))
    return rects


def _histogram_rects(t: dict, horizontal: bool) -> list[tuple[float, float, float, float]]:
    vals = [float(v) for v in _list(t.get("y" if horizontal else "x")) if _num(v) is not None]
    bins = t.get("ybins" if horizontal else "xbins") or {}
    size, start = _num(bins.get("size")), _num(bins.get("start"))
    if not vals:
        return []
    if size is None or start is None:
        return [(min(vals), max(vals) + 1e-9, 0.0, float(len(vals)))]
    counts: dict[int, int] = {}
    for v in vals:
        k = math.floor((v - start) / size)
        counts[k] = counts.get(k, 0) + 1
    return [(start + k * size, start + (k + 1) * size, 0.0, float(c)) for k, c in counts.items()]


def _check_overlap(d: dict, name: str) -> list[Problem]:
    data, layout = d["data"], d["layout"]
    rects = _bar_rects(data, layout)
    overlay_hist = (layout.get("barmode") or "group") == "overlay"
    out = []
    for a in range(len(rects)):
        ia, ka, p0, p1, v0, v1 = rects[a]
        for b in range(a + 1, len(rects)):
            ib, kb, q0, q1, w0, w1 = rects[b]
            if ka != kb or min(_opacity(data[ia]), _opacity(data[ib])) >= 1:
                continue
            hist = data[ia].get("type") == "histogram" or data[ib].get("type") == "histogram"
            if hist and (ia == ib or not overlay_hist):
                continue  # one histogram's bins never overlap; grouped/stacked ones neither
            if p0 < q1 and q0 < p1 and v0 < w1 and w0 < v1:
                out.append(Problem(
                    "translucent-overlap", name,
                    f"bars of trace {ia} ({data[ia].get('name')}) and trace {ib} "
                    f"({data[ib].get('name')}) overlap at {max(p0, q0):g}..{min(p1, q1):g} × "
                    f"{max(v0, w0):g}..{min(v1, w1):g} with opacity < 1",
                ))  # fmt: skip
                break
    return out


# -- integer ticks ---------------------------------------------------------------------------
def _axis_values(data: list[dict], axis: str) -> list[Any] | None:
    """The values drawn on ``axis`` (None when a histogram's counts are normalised)."""
    vals: list[Any] = []
    letter = axis[0]
    for t in data:
        if t.get("visible") is False or _trace_axes(t)[0 if letter == "x" else 1] != axis:
            continue
        kind = t.get("type") or "scatter"
        horizontal = t.get("orientation") == "h"
        if kind == "histogram":
            bin_letter = "y" if horizontal else "x"
            if letter == bin_letter:
                vals += _list(t.get(letter))
            elif t.get("histnorm"):
                return None
            else:  # counts
                vals += [float(c) for *_, c in _histogram_rects(t, horizontal)]
            continue
        own = _list(t.get(letter))
        if kind == "bar":
            value_letter = "x" if horizontal else "y"
            if letter == value_letter:
                base = _per_point(t.get("base"), len(own), 0)
                own = [b for b in base] + [
                    (float(b) + float(s)) if _num(b) is not None and _num(s) is not None else s
                    for b, s in zip(base, own, strict=True)
                ]
        elif kind == "heatmap" and not own:
            continue
        vals += own
    return vals


def _axes(d: dict) -> list[str]:
    names = {k for k in d["layout"] if re.fullmatch(r"[xy]axis\d*", k)}
    for t in d["data"]:
        names |= set(_trace_axes(t))
    return sorted(names)


def _whole_axes(d: dict) -> dict[str, tuple[float, float, list[float]]]:
    """Linear axes whose data are all whole numbers: (lo, hi, values) of each."""
    data, layout = d["data"], d["layout"]
    out = {}
    for axis in _axes(d):
        ax = layout.get(axis) or {}
        if ax.get("type") in ("log", "category", "multicategory", "date"):
            continue
        vals = _axis_values(data, axis)
        nums = [v for v in vals or [] if v is not None]
        if not nums or any(_num(v) is None for v in nums):
            continue  # nothing drawn, or strings: a category axis
        if all(float(v).is_integer() for v in nums):
            fl = [float(v) for v in nums]
            out[axis] = (min(fl), max(fl), fl)
    return out


def whole_number_axes(fig: Any) -> dict[str, tuple[float, float]]:
    """``{axis: (lo, hi)}`` of the linear axes of ``fig`` whose data are all whole numbers."""
    return {k: (lo, hi) for k, (lo, hi, _) in _whole_axes(figure_json(fig)).items()}


def _check_integer_ticks(d: dict, name: str) -> list[Problem]:
    layout = d["layout"]
    out = []
    for axis, (_lo, hi, nums) in _whole_axes(d).items():
        ax = layout.get(axis) or {}
        tickvals = ax.get("tickvals")
        dtick = _num(ax.get("dtick"))
        if ax.get("tickmode") == "array" or tickvals is not None:
            ok = all(_num(v) is not None and float(v).is_integer() for v in _list(tickvals))
        else:
            ok = dtick is not None and dtick >= 1 and dtick.is_integer()
        if not ok:
            out.append(Problem("integer-ticks", name, f"{axis} draws whole numbers only but "
                               f"its ticks may be fractional (dtick {ax.get('dtick')!r})"))  # fmt: skip
            continue
        big = max(abs(v) for v in nums) >= 10_000
        fmt = str(ax.get("tickformat") or "")
        if big and not re.fullmatch(r"[,~]*d", fmt) and ax.get("exponentformat") != "none":
            out.append(Problem("integer-ticks", name, f"{axis} reaches {hi:g}: plotly "
                               f"writes such ticks as '10.02k' unless tickformat is 'd'"))  # fmt: skip
    return out


# -- titles ----------------------------------------------------------------------------------
def _title_text(layout: dict) -> str:
    t = layout.get("title")
    if isinstance(t, dict):
        return str(t.get("text") or "")
    return str(t or "")


def _title_lines(text: str, size: float) -> list[tuple[str, float]]:
    """(plain text, font size) of each line of a title (``<br>`` splits, ``<sup>`` is 70 %)."""
    out = []
    for line in re.split(r"<br\s*/?>", text, flags=re.I):
        small = bool(re.search(r"<su[pb]>", line, flags=re.I)) and not re.sub(
            r"<su[pb]>.*?</su[pb]>", "", line, flags=re.I).strip()  # fmt: skip
        plain = re.sub(r"<[^>]+>", "", line)
        plain = re.sub(r"&[a-z]+;|&#\d+;", "x", plain)
        if plain.strip():
            out.append((plain, size * (0.7 if small else 1.0)))
    return out


def title_box(fig: Any) -> dict[str, float] | None:
    """The title's estimated box in px from the figure's top-left: left, right, top, bottom."""
    d = figure_json(fig)
    return _title_box(d["layout"])


def _title_box(layout: dict) -> dict[str, float] | None:
    text = _title_text(layout)
    font = _num(_layout_value(layout, "title.font.size"))
    if font is None:
        font = 1.4 * (_num(_layout_value(layout, "font.size")) or 12)
    lines = _title_lines(text, font)
    if not lines:
        return None
    w = _num(layout.get("width")) or DEFAULT_WIDTH
    h = _num(layout.get("height")) or DEFAULT_HEIGHT
    t = _num(_get(layout, "margin.t"))
    t = _DEFAULT_MARGIN["t"] if t is None else t
    x = _layout_value(layout, "title.x", 0.5)
    x = 0.5 if _num(x) is None else float(x)
    width = max(len(s) * CHAR_EM * size for s, size in lines)
    height = sum(1.3 * size for _, size in lines)
    xanchor = _get(layout, "title.xanchor", "auto")
    if xanchor == "auto":
        xanchor = "left" if x < 1 / 3 else "right" if x > 2 / 3 else "center"
    left = x * w - {"left": 0, "center": width / 2, "right": width}[xanchor]
    y = _get(layout, "title.y", "auto")
    first = lines[0][1]
    if _num(y) is None:  # auto: the first line's baseline at the middle of the top margin
        top = t / 2 - 0.8 * first
    else:
        yref = _get(layout, "title.yref", "container")
        pad = _num(_get(layout, "title.pad.t")) or 0
        ypx = (1 - float(y)) * h if yref == "container" else (1 - float(y)) * (h - t) + t
        yanchor = _get(layout, "title.yanchor", "auto")
        if yanchor in ("auto", "top"):  # plotly stacks a title's extra lines above the first
            top = ypx + pad - (height - 1.3 * first)
        elif yanchor == "bottom":
            top = ypx - height - (_num(_get(layout, "title.pad.b")) or 0)
        else:
            top = ypx - height / 2
    return {"left": left, "right": left + width, "top": top, "bottom": top + height,
            "width": w, "margin_t": t}  # fmt: skip


def _check_title(d: dict, name: str) -> list[Problem]:
    layout = d["layout"]
    box = _title_box(layout)
    if box is None:
        return []
    out = []
    w = box["width"]
    if box["left"] < 0 or box["right"] > w - 5:
        out.append(Problem("title", name, f"the title is ~{box['right'] - box['left']:.0f} px "
                           f"wide from x={box['left']:.0f}: it does not fit {w:.0f} px"))  # fmt: skip
    if box["top"] < MODEBAR_PX and box["right"] > w - MODEBAR_WIDTH_PX:
        out.append(Problem("title", name, f"the title (top {box['top']:.0f} px, right "
                           f"{box['right']:.0f} px) runs under the modebar"))  # fmt: skip
    if box["bottom"] > box["margin_t"] + 2:
        out.append(Problem("title", name, f"the title ends {box['bottom']:.0f} px down, below "
                           f"the top margin ({box['margin_t']:.0f} px)"))  # fmt: skip
    return out


# -- hidden traces ---------------------------------------------------------------------------
def _coord(v: Any, cats: dict[str, int]) -> float | None:
    """A number as itself, a category as its index (in order of first use)."""
    if isinstance(v, str):
        return float(cats.setdefault(v, len(cats)))
    return _num(v)


def _path(
    tr: dict, cats: dict[str, dict[str, int]] | None = None
) -> list[tuple[float, float]] | None:
    cats = {} if cats is None else cats
    xa, ya = _trace_axes(tr)
    xs = [_coord(v, cats.setdefault(xa, {})) for v in _list(tr.get("x"))]
    ys = [_coord(v, cats.setdefault(ya, {})) for v in _list(tr.get("y"))]
    pts = [(x, y) for x, y in zip(xs, ys, strict=False) if x is not None and y is not None]
    if not pts:
        return None
    shape = _get(tr, "line.shape", "linear")
    out = [pts[0]]
    for (x0, y0), (x1, y1) in zip(pts, pts[1:], strict=False):
        if shape == "hv":
            out.append((x1, y0))
        elif shape == "vh":
            out.append((x0, y1))
        out.append((x1, y1))
    return out


def _segments(path: list[tuple[float, float]]) -> list[tuple[tuple, tuple]]:
    return [(a, b) for a, b in zip(path, path[1:], strict=False) if a != b]


def _on_segment(p: tuple, a: tuple, b: tuple) -> bool:
    (px, py), (ax, ay), (bx, by) = p, a, b
    cross = (bx - ax) * (py - ay) - (by - ay) * (px - ax)
    scale = max(abs(bx - ax), abs(by - ay), 1e-12)
    if abs(cross) > 1e-9 * scale * max(1.0, abs(px), abs(py)):
        return False
    return (min(ax, bx) - 1e-9 <= px <= max(ax, bx) + 1e-9
            and min(ay, by) - 1e-9 <= py <= max(ay, by) + 1e-9)  # fmt: skip


def _covered(seg: tuple, path: list[tuple[float, float]]) -> bool:
    """``seg`` lies on ``path``: both ends and every vertex of ``path`` between them."""
    a, b = seg
    segs = _segments(path)
    for p in (a, b, ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)):
        if not any(_on_segment(p, s, e) for s, e in segs):
            return False
    return True


def _mode(tr: dict) -> str:
    return tr.get("mode") or ("lines+markers" if len(_list(tr.get("x"))) < 20 else "lines")


def _look(tr: dict, index: int, layout: dict) -> tuple:
    """What tells a line apart: (colour, width, dash, opacity)."""
    color = _get(tr, "line.color") or _colorway(layout)[index % len(_colorway(layout))]
    return (_norm(color), _num(_get(tr, "line.width")) or 2.0, _get(tr, "line.dash") or "solid",
            _num(tr.get("opacity")) or 1.0)  # fmt: skip


def _check_hidden(d: dict, name: str) -> list[Problem]:
    data, layout = d["data"], d["layout"]
    out = []
    lines = [(i, t) for i, t in enumerate(data)
             if (t.get("type") or "scatter") == "scatter" and t.get("visible") is not False
             and "lines" in _mode(t)]  # fmt: skip
    cats: dict[str, dict[str, int]] = {}
    paths = {i: _path(t, cats) for i, t in lines}
    for ia, a in lines:
        pa = paths[ia]
        if pa is None:
            continue
        for ib, b in lines:
            pb = paths[ib]
            if ib == ia or pb is None or _trace_axes(a) != _trace_axes(b):
                continue
            if not all(_covered(s, pb) for s in _segments(pa) or [(pa[0], pa[0])]):
                continue
            why = None
            la, lb = _look(a, ia, layout), _look(b, ib, layout)
            if (la[0], la[3]) == (lb[0], lb[3]) and la[1] <= lb[
                1
            ]:  # a dash does not tell two lines of one colour apart where they coincide
                why = "has the colour of"
            elif (
                ib > ia
                and _look(b, ib, layout)[2] == "solid"
                and (_look(b, ib, layout)[1] >= _look(a, ia, layout)[1])
                and not ("markers" in _mode(a) and not _markers_covered(a, b))
            ):
                why = "is covered by"
            if why is not None:
                out.append(Problem("hidden-trace", name, f"trace {ia} ({a.get('name')}) lies "
                                   f"wholly on trace {ib} ({b.get('name')}) and {why} it"))  # fmt: skip
                break
    return out + _check_hidden_markers(data, layout, name)


#: Markers closer than this share of their axis's span are drawn on the same spot (1 % of a
#: 600 px plot is 6 px, less than a marker).
MARKER_NEAR = 0.01


def _marker_look(tr: dict, index: int, layout: dict) -> tuple[str, float, float, bool]:
    """(colour, smallest size, largest size, filled) of a trace's markers; open symbols and
    translucent markers are not filled."""
    color = _get(tr, "marker.color")
    if not isinstance(color, str):
        color = _colorway(layout)[index % len(_colorway(layout))]
    sizes = [_num(v) or 6.0 for v in _list(_get(tr, "marker.size", 6))] or [6.0]
    symbols = [str(v) for v in _list(_get(tr, "marker.symbol", "circle"))]
    opacity = (_num(tr.get("opacity")) or 1.0) * min(
        (_num(v) or 1.0 for v in _list(_get(tr, "marker.opacity", 1.0))), default=1.0
    )
    filled = opacity >= 1.0 and not any("open" in sym for sym in symbols)
    return _norm(color), min(sizes), max(sizes), filled


def _check_hidden_markers(data: list[dict], layout: dict, name: str) -> list[Problem]:
    """A markers-only trace each of whose points is drawn (within ``MARKER_NEAR`` of the
    axes' spans) under a filled marker of a later trace at least as big, or is an unfilled
    marker on a filled one of its own colour at least as big, cannot be seen."""
    marks = [(i, t) for i, t in enumerate(data)
             if (t.get("type") or "scatter") == "scatter" and t.get("visible") is not False
             and "markers" in _mode(t) and "lines" not in _mode(t)]  # fmt: skip
    cats: dict[str, dict[str, int]] = {}
    pts: dict[int, list[tuple[float, float]]] = {}
    for i, t in marks:
        xa, ya = _trace_axes(t)
        xs = [_coord(v, cats.setdefault(xa, {})) for v in _list(t.get("x"))]
        ys = [_coord(v, cats.setdefault(ya, {})) for v in _list(t.get("y"))]
        pts[i] = [(x, y) for x, y in zip(xs, ys, strict=False) if x is not None and y is not None]
    span: dict[tuple[str, str], tuple[float, float]] = {}
    for i, t in marks:
        if pts[i]:
            key = _trace_axes(t)
            xs, ys = [p[0] for p in pts[i]], [p[1] for p in pts[i]]
            old = span.get(key)
            lo_x, hi_x, lo_y, hi_y = min(xs), max(xs), min(ys), max(ys)
            if old is not None:
                lo_x, hi_x = min(lo_x, old[0][0]), max(hi_x, old[0][1])
                lo_y, hi_y = min(lo_y, old[1][0]), max(hi_y, old[1][1])
            span[key] = ((lo_x, hi_x), (lo_y, hi_y))  # type: ignore[assignment]
    out = []
    for ia, a in marks:
        if not pts[ia]:
            continue
        (lx, hx), (ly, hy) = span[_trace_axes(a)]  # type: ignore[misc]
        near_x, near_y = MARKER_NEAR * (hx - lx), MARKER_NEAR * (hy - ly)
        ca, _, big_a, filled_a = _marker_look(a, ia, layout)
        for ib, b in marks:
            if ib == ia or _trace_axes(a) != _trace_axes(b) or not pts[ib]:
                continue
            cb, small_b, _, filled_b = _marker_look(b, ib, layout)
            if not filled_b or small_b < big_a:
                continue
            if not all(any(abs(x - u) <= near_x and abs(y - v) <= near_y for u, v in pts[ib])
                       for x, y in pts[ia]):  # fmt: skip
                continue
            why = ("is covered by" if ib > ia
                   else "has the colour of" if ca == cb and not filled_a else None)  # fmt: skip
            if why is not None:
                out.append(Problem("hidden-trace", name, f"trace {ia} ({a.get('name')}) lies "
                                   f"wholly on trace {ib} ({b.get('name')}) and {why} it"))  # fmt: skip
                break
    return out


def _markers_covered(a: dict, b: dict) -> bool:
    if "markers" not in _mode(b):
        return False
    pts_b = set(zip(_list(b.get("x")), _list(b.get("y")), strict=False))
    size_a = max((_num(s) or 6 for s in _list(_get(a, "marker.size", 6))), default=6)
    size_b = min((_num(s) or 6 for s in _list(_get(b, "marker.size", 6))), default=6)
    pts_a = set(zip(_list(a.get("x")), _list(a.get("y")), strict=False))
    return pts_a <= pts_b and size_b >= size_a


#: A marker this close to the edge of a fixed axis range (as a share of the range's span) is
#: cut by it: 0.5 % of a 600 px plot is 3 px, the radius of a 6 px marker.
EDGE_NEAR = 0.005


def _check_clipped_markers(d: dict, name: str) -> list[Problem]:
    data, layout = d["data"], d["layout"]
    out = []
    for i, t in enumerate(data):
        if ((t.get("type") or "scatter") != "scatter" or t.get("visible") is False
                or "markers" not in _mode(t) or t.get("cliponaxis") is False):  # fmt: skip
            continue
        for letter, axis in zip("xy", _trace_axes(t), strict=True):
            ax = layout.get(axis) or {}
            rng = [_num(v) for v in _list(ax.get("range"))]
            if len(rng) != 2 or None in rng or ax.get("autorange") is True:
                continue
            if ax.get("type") in ("category", "log", "date"):
                continue
            lo, hi = min(rng), max(rng)  # type: ignore[type-var]
            near = EDGE_NEAR * (hi - lo)
            vals = [v for v in (_num(v) for v in _list(t.get(letter))) if v is not None]
            if any(v < lo or v > hi for v in vals):
                continue  # a zoomed window (the panel's timeline): its edges cut what they may
            edge = sorted({v for v in vals if min(v - lo, hi - v) <= near})
            if edge:
                out.append(Problem("clipped-marker", name, f"trace {i} ({t.get('name')}) has "
                                   f"markers at {letter} = {edge[:3]} on the edge of its "
                                   f"{axis} range [{lo:g}, {hi:g}]"))  # fmt: skip
    return out


# -- the check -------------------------------------------------------------------------------
_CHECKS = {
    "legend": _check_legend,
    "translucent-overlap": _check_overlap,
    "integer-ticks": _check_integer_ticks,
    "title": _check_title,
    "hidden-trace": _check_hidden,
    "clipped-marker": _check_clipped_markers,
}


def check_figure(
    fig: Any, name: str = "figure", *, rules: tuple[str, ...] = RULES
) -> list[Problem]:
    """The problems of ``fig`` under ``rules`` (default: all six), in rule order.

    Raises:
        TypeError: ``fig`` is not a plotly figure or its dict.
        ValueError: an unknown rule.
    """
    bad = [r for r in rules if r not in _CHECKS]
    if bad:
        raise ValueError(f"unknown rules {bad}; choose from {list(RULES)}")
    d = figure_json(fig)
    return [p for r in rules for p in _CHECKS[r](d, name)]


def figures_of(obj: Any, name: str = "") -> list[tuple[str, Any]]:
    """The figures ``obj`` draws, named: a figure itself; a control panel's timeline (live or
    static); the run explorer's figure; the outcome explorer's bar chart and timeline."""
    out: list[tuple[str, Any]] = []
    if hasattr(obj, "to_plotly_json") and hasattr(obj, "data"):
        return [(name or "figure", obj)]
    timeline = getattr(obj, "timeline", None)
    if timeline is not None and hasattr(timeline, "widget"):
        out += [(f"{name} timeline", f) for f in _widget_figures(timeline.widget)]
    fig = getattr(obj, "fig", None)
    if fig is not None and hasattr(fig, "to_plotly_json"):
        out.append((f"{name} figure", fig))
    summary = getattr(obj, "summary", None)
    if summary is not None and hasattr(obj, "metric") and hasattr(obj, "by"):
        from mqlab.lab.explorer import explorer_figure

        out.append((f"{name} figure", explorer_figure(summary, obj.metric.value, obj.by.value,
                                                      obj.dataset.value)))  # fmt: skip
    return out


def _widget_figures(widget: Any) -> list[Any]:
    if hasattr(widget, "to_plotly_json"):
        return [widget]
    figs = []
    for o in getattr(widget, "outputs", ()) or ():
        bundle = (o.get("data") or {}).get("application/vnd.plotly.v1+json")
        if bundle is not None:
            figs.append({"data": bundle.get("data"), "layout": bundle.get("layout")})
    return figs
