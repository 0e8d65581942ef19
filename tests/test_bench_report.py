"""The growth table of benchmarks/results.md judges a scenario on its sizes measured in turns
when the run has them, and on the sizes' own parts of the run otherwise; comparisons in turns
swap their order every round."""

from __future__ import annotations

from benchmarks.load import Measure, round_order
from benchmarks.report import Stage, growth_lines


def _stage(threads: int, requests_per_second: float) -> Stage:
    row = Measure("one thread", requests_per_second, p50_ms=10.0, p99_ms=20.0, requests=1000, errors=0)
    return Stage(threads, 0.0, {}, [row], None, [], [])


def _row(lines: list[str]) -> str:
    return next(line for line in lines if line.startswith("| one thread |"))


def test_growth_is_judged_on_the_median_of_the_rounds_in_turns():
    lines = growth_lines([_stage(1_000_000, 1000), _stage(10_000_000, 600)], {"one thread": [0.9, 1.0, 0.95]})

    assert _row(lines) == "| one thread | 1000 | 600 | 0.60 | 0.95 (0.90, 1.00, 0.95) | ≥ 0.8 ✓ | - | - |"


def test_growth_without_rounds_in_turns_is_judged_on_the_parts_apart():
    lines = growth_lines([_stage(1_000_000, 1000), _stage(10_000_000, 600)])

    assert _row(lines) == "| one thread | 1000 | 600 | 0.60 |  | ≥ 0.8 ✗ | - | - |"


def test_comparisons_in_turns_swap_their_order_every_round():
    assert [round_order(number, "smaller", "larger") for number in (1, 2, 3)] == [
        ("smaller", "larger"),
        ("larger", "smaller"),
        ("smaller", "larger"),
    ]
