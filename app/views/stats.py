"""Statistics of one application: figures from the stats service, drawn as inline SVG."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from quart import Blueprint, request

from app.links import logo_path
from app.models import SENTIMENTS
from app.repositories.applications import ApplicationRow
from app.services.applications import get_application
from app.services.stats import PERIODS, Day, Statistics, application_statistics, parse_period
from app.views.rendering import render_template
from app.views.security import agent_required, current_agent
from app.views.thread_display import duration

blueprint = Blueprint("stats", __name__)

# Geometry of the feedback-per-day chart, in viewBox units.
WIDTH, HEIGHT = 720, 240
LEFT, RIGHT, TOP, BOTTOM = 40, 24, 12, 28
LABEL_EVERY = {7: 1, 30: 5, 90: 15}
NPS_LABELS = {
    "detractors": "Detractors (0\N{EN DASH}6)",
    "passives": "Passives (7\N{EN DASH}8)",
    "promoters": "Promoters (9\N{EN DASH}10)",
}


@dataclass(frozen=True)
class Segment:
    """One coloured part of a stacked bar: a sentiment or an NPS group."""

    name: str
    label: str
    count: int
    percent: float
    x: float = 0.0


def _round(value: float) -> float:
    return round(value, 2)


def nice_ceiling(value: int) -> tuple[int, int]:
    """The top of a y axis at or above ``value``, and its tick step (1, 2 or 5 times 10^n)."""
    if value <= 4:
        return 4, 1
    magnitude = 10 ** math.floor(math.log10(value / 4))
    for factor in (1, 2, 5, 10):
        step = factor * magnitude
        if step * 4 >= value:
            return math.ceil(value / step) * step, step
    raise AssertionError("unreachable")


def day_chart(days: Sequence[Day]) -> dict[str, object]:
    """Bars stacked by sentiment, one per day, with the axis ticks and day labels."""
    busiest = max((day.total for day in days), default=0)
    top, step = nice_ceiling(busiest)
    plot_width, plot_height = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    slot = plot_width / max(len(days), 1)
    bar_width = max(slot * 0.72, 1.0)
    every = LABEL_EVERY.get(len(days), max(len(days) // 6, 1))
    bars = []
    for index, day in enumerate(days):
        x = LEFT + index * slot + (slot - bar_width) / 2
        base: float = TOP + plot_height
        parts = []
        for name in SENTIMENTS:
            count = day.sentiments.get(name, 0)
            if not count:
                continue
            height = count / top * plot_height
            base -= height
            parts.append({"name": name, "y": _round(base), "height": _round(height)})
        bars.append(
            {
                "day": day,
                "label": f"{day.day.day} {day.day:%b}",
                "long_label": f"{day.day:%a} {day.day.day} {day.day:%b}",
                "x": _round(x),
                "width": _round(bar_width),
                "parts": parts,
                "label_x": _round(x + bar_width / 2),
                "labelled": (len(days) - 1 - index) % every == 0,
            }
        )
    ticks = [
        {"value": value, "y": _round(TOP + plot_height - value / top * plot_height)}
        for value in range(0, top + 1, step)
    ]
    return {
        "width": WIDTH,
        "height": HEIGHT,
        "left": LEFT,
        "right": WIDTH - RIGHT,
        "baseline": TOP + plot_height,
        "bars": bars,
        "ticks": ticks,
        "busiest": busiest,
    }


def stacked(counts: dict[str, int], labels: dict[str, str]) -> list[Segment]:
    """Parts of a 100-wide stacked bar, in the order of ``labels``."""
    total = sum(counts.get(name, 0) for name in labels)
    segments, x = [], 0.0
    for name, label in labels.items():
        count = counts.get(name, 0)
        percent = count * 100 / total if total else 0.0
        segments.append(Segment(name, label, count, percent, _round(x)))
        x += percent
    return segments


def ratio(value: int, maximum: int) -> float:
    """Width of a bar in a 100-wide meter."""
    return _round(min(value / maximum, 1.0) * 100) if maximum else 0.0


def format_percent(value: float | None) -> str:
    """A percentage for people: one decimal below 10 %, none above."""
    if value is None:
        return "\N{EN DASH}"
    return f"{value:.1f} %" if 0 < value < 10 else f"{value:.0f} %"


def _context(application: ApplicationRow, stats: Statistics, period: int) -> dict[str, object]:
    """Everything the statistics page shows."""
    nps = stats.nps
    reply_scale = max(stats.average_first_reply_time, stats.target_first_reply_time)
    return {
        "application": application,
        "logo_url": logo_path(application),
        "section": "stats",
        "stats": stats,
        "period": period,
        "periods": PERIODS,
        "percent": format_percent,
        "chart": day_chart(stats.days),
        "sentiments": stacked(
            stats.sentiments, {"positive": "Positive", "neutral": "Neutral", "negative": "Negative"}
        ),
        "nps_groups": stacked(
            {"promoters": nps.promoters, "passives": nps.passives, "detractors": nps.detractors},
            NPS_LABELS,
        ),
        "reply": {
            "average": duration(stats.average_first_reply_time),
            "target": duration(stats.target_first_reply_time),
            "average_width": ratio(stats.average_first_reply_time, reply_scale),
            "target_width": ratio(stats.target_first_reply_time, reply_scale),
        },
        "funnel": {
            "opens_width": ratio(stats.form_opens, max(stats.form_opens, stats.submissions)),
            "submissions_width": ratio(stats.submissions, max(stats.form_opens, stats.submissions)),
        },
    }


@blueprint.get("/applications/<id:application_id>/stats")
@agent_required
async def show_stats(application_id: int) -> str:
    """Feedback per day, sentiment, NPS, first reply time and form conversion of a period."""
    application = await get_application(current_agent(), application_id)
    period = parse_period(request.args.get("days"))
    stats = await application_statistics(application, period)
    return await render_template("stats/show.html", **_context(application, stats, period))
