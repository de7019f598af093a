"""Small charts as inline SVG, drawn by our own code: no JavaScript library, no network.

Each builder lays a chart out and returns a :class:`Chart`: a list of :class:`Mark` (an SVG
element, its attributes, its text and a tooltip) that one template
(``templates/partials/chart.html``) writes out: text and tooltips autoescaped, attribute
values escaped by :attr:`Mark.attributes`. Labels come from results (domain names, task
ids) and are hostile text: they only ever travel as attribute values and text, never as
markup. Every chart has a ``<title>`` and a ``<desc>`` for screen
readers, and every bar or point a ``<title>`` tooltip with its exact figures.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from markupsafe import Markup, escape

#: Colours of the charts (GitHub's palette, readable on white).
PASS, FAIL, MUTED, GRID, INK = "#2da44e", "#cf222e", "#8c959f", "#d0d7de", "#1f2328"
SERIES = ("#0969da", "#bf8700", "#8250df", "#1a7f37")
#: Colours for stacked segments (per-phase time), in order.
PALETTE = (
    "#0969da",
    "#54aeff",
    "#bf8700",
    "#a475f9",
    "#8250df",
    "#2da44e",
    "#1a7f37",
    "#cf222e",
    "#e16f24",
    "#8c959f",
    "#bc4c00",
)
FONT = 12
#: Average width of a character at :data:`FONT`, to size the label column.
CHAR_W = 6.6


@dataclass
class Mark:
    """One SVG element: its tag, attributes, text content and tooltip (``<title>``)."""

    tag: str
    attrs: dict[str, str | float]
    text: str = ""
    title: str = ""

    @property
    def attributes(self) -> Markup:
        """The attributes as markup, every text value escaped (names are ours, never data).

        Jinja's ``xmlattr`` filter does the same but costs a third of a large report's time.
        """
        return Markup("".join(f' {name}="{_attribute(value)}"' for name, value in self.attrs.items()))


def _attribute(value: str | float) -> str:
    return str(value) if isinstance(value, int | float) else str(escape(value))


@dataclass
class Chart:
    """A laid-out chart: size, accessible title and description, and its marks."""

    key: str
    title: str
    desc: str
    width: float
    height: float
    marks: list[Mark] = field(default_factory=list)

    @property
    def dom_id(self) -> str:
        """A page-unique id for ``aria-labelledby``."""
        return f"chart-{self.key}"


@dataclass
class RateRow:
    """One row of a rate chart: a label and, per series, ``(passed, ran)``."""

    label: str
    counts: list[tuple[int, int]]


@dataclass
class Column:
    """One column of a column chart: a label, one value per segment, a tooltip."""

    label: str
    values: list[float]
    title: str = ""


def _r(value: float) -> float:
    return round(value, 2)


def _clip(label: str, chars: int) -> str:
    return label if len(label) <= chars else label[: max(1, chars - 1)] + "…"


def _label_width(labels: Iterable[str]) -> tuple[float, int]:
    """The width of a label column (at most 220 px) and the characters that fit in it."""
    chars = min(32, max((len(label) for label in labels), default=4))
    return max(60.0, CHAR_W * chars) + 8, chars


def _text(x: float, y: float, text: str, anchor: str = "start", **extra: str | float) -> Mark:
    attrs: dict[str, str | float] = {"x": _r(x), "y": _r(y), "text-anchor": anchor, "font-size": FONT}
    attrs.update(extra)
    return Mark("text", attrs, text=text)


def _line(x1: float, y1: float, x2: float, y2: float, stroke: str = GRID, width: float = 1) -> Mark:
    return Mark(
        "line",
        {"x1": _r(x1), "y1": _r(y1), "x2": _r(x2), "y2": _r(y2), "stroke": stroke, "stroke-width": width},
    )


def _rect(x: float, y: float, w: float, h: float, fill: str, title: str = "", **extra: str | float) -> Mark:
    attrs: dict[str, str | float] = {"x": _r(x), "y": _r(y), "width": _r(max(0.0, w)), "height": _r(h)}
    attrs["fill"] = fill
    attrs.update(extra)
    return Mark("rect", attrs, title=title)


def percent(value: float) -> str:
    """``value`` (a share in [0, 1]) as a percentage with one decimal."""
    return f"{100 * value:.1f}%"


def nice_step(value: float, whole: bool = False) -> float:
    """The smallest of 1, 2, 2.5 or 5 times a power of ten that is at least ``value``.

    ``whole`` keeps to whole numbers (1, 2, 5, 10, ...), for axes that count things.
    """
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 5, 10) if whole else (1, 2, 2.5, 5, 10):
        candidate = step * power
        if candidate >= value * (1 - 1e-9) and (not whole or candidate >= 1):
            return float(candidate)
    return 1.0  # a whole-number step below 1 was asked for: 1 is the smallest


def _legend(marks: list[Mark], x: float, y: float, entries: list[tuple[str, str]]) -> None:
    for name, colour in entries:
        marks.append(_rect(x, y - 9, 10, 10, colour))
        marks.append(_text(x + 14, y, name))
        x += 14 + CHAR_W * len(name) + 16


def rate_chart(
    key: str,
    title: str,
    rows: list[RateRow],
    series: list[str],
    wilson: dict[tuple[int, int], tuple[float, float]],
    width: float = 760,
) -> Chart:
    """Horizontal bars of success rates with their Wilson intervals as error bars.

    ``series`` names the bars of each row (one name: no legend; two: a comparison);
    ``wilson`` maps ``(passed, ran)`` to the interval. A row whose ``ran`` is 0 says so.
    """
    label_w, label_chars = _label_width(r.label for r in rows)
    x0, right = label_w + 6, 200.0
    plot_w = width - x0 - right
    bar_h, gap = 14.0, 10.0
    top = 28.0 if len(series) > 1 else 12.0
    row_h = bar_h * len(series) + 4 * (len(series) - 1) + gap
    height = top + row_h * len(rows) + 26
    chart = Chart(key, title, "", width, height)
    marks = chart.marks
    if len(series) > 1:
        _legend(marks, x0, 16, list(zip(series, SERIES, strict=False)))
    bottom = top + row_h * len(rows)
    for tick in (0, 0.25, 0.5, 0.75, 1.0):
        x = x0 + tick * plot_w
        marks.append(_line(x, top - 4, x, bottom))
        marks.append(_text(x, bottom + 16, percent(tick).replace(".0%", "%"), "middle", fill=MUTED))
    descriptions = []
    for index, row in enumerate(rows):
        y = top + index * row_h
        marks.append(_text(x0 - 8, y + (row_h - gap) / 2 + 4, _clip(row.label, label_chars), "end"))
        marks[-1].title = row.label
        for number, (passed, ran) in enumerate(row.counts):
            by = y + number * (bar_h + 4)
            colour = SERIES[number % len(SERIES)] if len(series) > 1 else PASS
            who = f" ({series[number]})" if len(series) > 1 else ""
            if ran == 0:
                marks.append(_text(x0 + 4, by + bar_h - 3, "no task ran", fill=MUTED))
                descriptions.append(f"{row.label}{who}: no task ran")
                continue
            rate = passed / ran
            low, high = wilson[(passed, ran)]
            tip = (
                f"{row.label}{who}: {percent(rate)} passed ({passed} of {ran}); "
                f"95% Wilson interval {percent(low)} to {percent(high)}"
            )
            descriptions.append(tip)
            marks.append(
                _rect(
                    x0,
                    by,
                    rate * plot_w,
                    bar_h,
                    colour,
                    tip,
                    **{"data-rate": f"{rate:.6f}", "class": "rate-bar"},
                )
            )
            cy = by + bar_h / 2
            lx, hx = x0 + low * plot_w, x0 + high * plot_w
            whisker = {"data-low": f"{low:.6f}", "data-high": f"{high:.6f}", "class": "rate-ci"}
            marks.append(Mark("path", {"d": _whisker(lx, hx, cy), "stroke": INK, "fill": "none", **whisker}))
            marks[-1].title = tip
            marks.append(
                _text(
                    x0 + plot_w + 8,
                    by + bar_h - 3,
                    f"{percent(rate)} ({passed}/{ran}) [{percent(low)}, {percent(high)}]",
                )
            )
    chart.desc = "; ".join(descriptions) or "no data"
    return chart


def _whisker(lx: float, hx: float, cy: float) -> str:
    """An error bar from ``lx`` to ``hx`` at height ``cy``, with end caps."""
    top, bottom = _r(cy - 5), _r(cy + 5)
    return f"M{_r(lx)},{_r(cy)} H{_r(hx)} M{_r(lx)},{top} V{bottom} M{_r(hx)},{top} V{bottom}"


def column_chart(
    key: str,
    title: str,
    columns: list[Column],
    segments: list[tuple[str, str]],
    y_label: str,
    unit: str = "",
    width: float = 760,
    height: float = 260,
) -> Chart:
    """Vertical (stacked) columns: ``segments`` names and colours each value of a column.

    Used for histograms (one segment, or passed and not passed) and per-task time by
    phase. Column labels are written under the columns while they fit.
    """
    chart = Chart(key, title, "", width, height)
    marks = chart.marks
    x0, top, bottom_pad = 56.0, 30.0 if len(segments) > 1 else 14.0, 46.0
    plot_w, plot_h = width - x0 - 12, height - top - bottom_pad
    bottom = top + plot_h
    totals = [sum(c.values) for c in columns]
    tick = nice_step(max(totals, default=0.0) / 4, whole=not unit)
    y_max = 4 * tick
    if len(segments) > 1:
        _legend(marks, x0, 16, segments)
    for step in range(5):
        value = y_max * step / 4
        y = bottom - plot_h * step / 4
        marks.append(_line(x0, y, x0 + plot_w, y))
        marks.append(_text(x0 - 6, y + 4, f"{value:g}{unit}", "end", fill=MUTED))
    marks.append(
        _text(
            14,
            top + plot_h / 2,
            y_label,
            "middle",
            fill=MUTED,
            transform=f"rotate(-90 14 {_r(top + plot_h / 2)})",
        )
    )
    slot = plot_w / max(1, len(columns))
    bar_w = max(1.0, min(48.0, slot * 0.8))
    label_chars = int(slot / CHAR_W)
    descriptions = []
    for index, column in enumerate(columns):
        x = x0 + slot * index + (slot - bar_w) / 2
        y = bottom
        tip = column.title or f"{column.label}: " + ", ".join(
            f"{name} {value:g}{unit}" for (name, _), value in zip(segments, column.values, strict=False)
        )
        descriptions.append(tip)
        for (name, colour), value in zip(segments, column.values, strict=False):
            if value <= 0:
                continue
            h = plot_h * value / y_max
            y -= h
            marks.append(_rect(x, y, bar_w, h, colour, **{"data-value": f"{value:g}", "data-segment": name}))
            marks[-1].attrs["data-column"] = column.label
        # One transparent cover per column carries the tooltip (not one per segment: a page
        # with hundreds of tasks stays small).
        marks.append(_rect(x, y, bar_w, bottom - y, "transparent", tip, **{"data-column": column.label}))
        if label_chars >= 3:
            shown = _clip(column.label, label_chars)
            marks.append(_text(x + bar_w / 2, bottom + 15, shown, "middle"))
            marks[-1].title = column.label if shown != column.label else ""
    marks.append(_line(x0, bottom, x0 + plot_w, bottom, INK))
    chart.desc = _describe(descriptions, "columns")
    return chart


def _describe(parts: list[str], what: str, most: int = 40) -> str:
    """The chart's ``<desc>``: every figure, or a count when there are too many to read out."""
    if not parts:
        return "no data"
    if len(parts) > most:
        return f"{len(parts)} {what}; each has a tooltip with its figures"
    return "; ".join(parts)


def bar_chart(
    key: str,
    title: str,
    rows: list[tuple[str, float, str]],
    colours: list[str] | None = None,
    width: float = 760,
) -> Chart:
    """Horizontal bars of one value each: ``(label, value, text shown beside the bar)``."""
    label_w, label_chars = _label_width(r[0] for r in rows)
    x0, right, bar_h, gap, top = label_w + 6, 170.0, 14.0, 8.0, 8.0
    plot_w = width - x0 - right
    height = top + (bar_h + gap) * len(rows) + 8
    chart = Chart(key, title, "", width, height)
    peak = max((value for _, value, _ in rows), default=0.0) or 1.0
    for index, (label, value, text) in enumerate(rows):
        y = top + index * (bar_h + gap)
        colour = colours[index % len(colours)] if colours else SERIES[0]
        chart.marks.append(_text(x0 - 8, y + bar_h - 3, _clip(label, label_chars), "end"))
        chart.marks.append(
            _rect(
                x0,
                y,
                plot_w * value / peak,
                bar_h,
                colour,
                f"{label}: {text}",
                **{"data-value": f"{value:g}"},
            )
        )
        chart.marks.append(_text(x0 + plot_w * value / peak + 6, y + bar_h - 3, text))
    chart.desc = "; ".join(f"{label}: {text}" for label, _, text in rows) or "no data"
    return chart


def line_chart(
    key: str,
    title: str,
    series: list[tuple[str, list[tuple[int, float]]]],
    x_label: str,
    y_label: str,
    width: float = 560,
    height: float = 260,
) -> Chart:
    """Lines over whole-number x (``k``) and y a share in [0, 1], with a point per value."""
    chart = Chart(key, title, "", width, height)
    marks = chart.marks
    x0, top, bottom_pad = 56.0, 30.0, 44.0
    plot_w, plot_h = width - x0 - 20, height - top - bottom_pad
    bottom = top + plot_h
    xs = sorted({x for _, points in series for x, _ in points}) or [1]
    low_x, high_x = xs[0], xs[-1]

    def px(x: int) -> float:
        return x0 + (plot_w / 2 if high_x == low_x else plot_w * (x - low_x) / (high_x - low_x))

    for tick in (0, 0.25, 0.5, 0.75, 1.0):
        y = bottom - plot_h * tick
        marks.append(_line(x0, y, x0 + plot_w, y))
        marks.append(_text(x0 - 6, y + 4, percent(tick).replace(".0%", "%"), "end", fill=MUTED))
    for x in xs:
        marks.append(_text(px(x), bottom + 16, str(x), "middle", fill=MUTED))
    marks.append(_text(x0 + plot_w / 2, bottom + 34, x_label, "middle", fill=MUTED))
    marks.append(
        _text(
            14,
            top + plot_h / 2,
            y_label,
            "middle",
            fill=MUTED,
            transform=f"rotate(-90 14 {_r(top + plot_h / 2)})",
        )
    )
    _legend(marks, x0, 16, [(name, SERIES[i % len(SERIES)]) for i, (name, _) in enumerate(series)])
    descriptions = []
    for number, (name, points) in enumerate(series):
        colour = SERIES[number % len(SERIES)]
        coords = [(px(x), bottom - plot_h * y) for x, y in points]
        if len(coords) > 1:
            path = "M" + " L".join(f"{_r(cx)},{_r(cy)}" for cx, cy in coords)
            marks.append(Mark("path", {"d": path, "stroke": colour, "fill": "none", "stroke-width": 2}))
        for (x, y), (cx, cy) in zip(points, coords, strict=True):
            tip = f"{name} at k={x}: {percent(y)}"
            descriptions.append(tip)
            marks.append(
                Mark(
                    "circle",
                    {"cx": _r(cx), "cy": _r(cy), "r": 4, "fill": colour, "data-value": f"{y:.6f}"},
                    title=tip,
                )
            )
    chart.desc = "; ".join(descriptions) or "no data"
    return chart
