"""Measure the analyzers on a labelled JSON-lines file: accuracy, macro-F1, confusion, cost."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

LABELS = ("positive", "neutral", "negative")


@dataclass
class Example:
    """One labelled text; ``language`` may be empty (then it is detected)."""

    text: str
    label: str
    language: str = ""


@dataclass
class Report:
    """The measurements of one language (or of everything)."""

    language: str
    total: int = 0
    correct: int = 0
    confusion: dict[str, dict[str, int]] = field(
        default_factory=lambda: {gold: dict.fromkeys(LABELS, 0) for gold in LABELS}
    )
    costs: list[float] = field(default_factory=list)  # seconds per message

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else 0.0

    @property
    def macro_f1(self) -> float:
        scores = []
        for label in LABELS:
            tp = self.confusion[label][label]
            predicted = sum(self.confusion[gold][label] for gold in LABELS)
            actual = sum(self.confusion[label].values())
            precision = tp / predicted if predicted else 0.0
            recall = tp / actual if actual else 0.0
            scores.append(2 * precision * recall / (precision + recall) if precision + recall else 0.0)
        return sum(scores) / len(scores)

    @property
    def microseconds(self) -> float:
        return sum(self.costs) / self.total * 1e6 if self.total else 0.0

    @property
    def p99_microseconds(self) -> float:
        """The cost under which 99 % of the messages stay."""
        if not self.costs:
            return 0.0
        ordered = sorted(self.costs)
        return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1e6

    @property
    def max_microseconds(self) -> float:
        return max(self.costs, default=0.0) * 1e6

    def add(self, gold: str, predicted: str, seconds: float) -> None:
        self.total += 1
        self.correct += gold == predicted
        self.confusion.setdefault(gold, dict.fromkeys(LABELS, 0))
        self.confusion[gold][predicted] = self.confusion[gold].get(predicted, 0) + 1
        self.costs.append(seconds)


def read_examples(path: str | Path) -> list[Example]:
    """Lines ``{"text": ..., "label": ..., "lang": ...}``; blank lines are skipped."""
    examples = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            examples.append(Example(row["text"], row.get("label", ""), row.get("lang") or ""))
    return examples


def evaluate(
    examples: Sequence[Example],
    label: Callable[[str, str | None], str],
    repeat: int = 3,
    detect: bool = False,
) -> list[Report]:
    """One report per language (in first-seen order) and one for all, timing ``label`` calls.

    Each message is timed ``repeat`` times after one warm-up pass and the fastest pass counts,
    so that a busy machine does not inflate the cost. With ``detect`` the analyzer is not told
    the language (it detects it); the reports are still grouped by the file's language.
    """
    reports: dict[str, Report] = {}
    overall = Report("all")
    given = [None if detect else (e.language or None) for e in examples]
    predictions = [label(e.text, language) for e, language in zip(examples, given, strict=True)]
    best = [float("inf")] * len(examples)
    for _ in range(max(1, repeat)):
        for index, example in enumerate(examples):
            start = time.perf_counter()
            label(example.text, given[index])
            best[index] = min(best[index], time.perf_counter() - start)
    for example, predicted, seconds in zip(examples, predictions, best, strict=True):
        report = reports.setdefault(example.language or "?", Report(example.language or "?"))
        report.add(example.label, predicted, seconds)
        overall.add(example.label, predicted, seconds)
    return [*reports.values(), overall]


def format_reports(reports: Iterable[Report]) -> str:
    """A plain-text table per language and its confusion matrix."""
    lines = [
        f"{'lang':<5} {'n':>5} {'accuracy':>9} {'macro-F1':>9} {'µs/msg':>8} {'p99 µs':>8} {'max µs':>8}"
    ]
    details = []
    for report in reports:
        lines.append(
            f"{report.language:<5} {report.total:>5} {report.accuracy:>9.3f} "
            f"{report.macro_f1:>9.3f} {report.microseconds:>8.1f} "
            f"{report.p99_microseconds:>8.1f} {report.max_microseconds:>8.1f}"
        )
        details.append(f"\n{report.language}: confusion (rows gold, columns predicted)")
        details.append(f"{'':>10}" + "".join(f"{label:>10}" for label in LABELS))
        for gold in LABELS:
            details.append(f"{gold:>10}" + "".join(f"{report.confusion[gold][p]:>10}" for p in LABELS))
    return "\n".join(lines + details)
