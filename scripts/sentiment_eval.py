"""Evaluate the sentiment analyzers and tune their neutral bands on a labelled file.

    python scripts/sentiment_eval.py ../shared/data/sentiment-dev.jsonl            # measure
    python scripts/sentiment_eval.py ../shared/data/sentiment-dev.jsonl --tune     # best bands
    python scripts/sentiment_eval.py FILE --errors es                              # misses
    python scripts/sentiment_eval.py FILE --cross-validate                         # tuning's share

The dev set is research-only: it may tune the two thresholds per language (printed, then copied
by hand into english.py / lexicon.py), never train anything that ships. Nothing is written.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.services import sentiment
from app.services.sentiment import _ANALYZERS
from app.services.sentiment.base import label_from_thresholds
from app.services.sentiment.evaluate import Report, evaluate, format_reports, read_examples

GRID = [round(-0.6 + 0.05 * step, 2) for step in range(25)]


def _macro_f1(scored: list[tuple[str, float]], positive_at: float, negative_at: float) -> float:
    report = Report("")
    for gold, polarity in scored:
        report.add(gold, label_from_thresholds(polarity, positive_at, negative_at), 0.0)
    return report.macro_f1


def _best_band(scored: list[tuple[str, float]]) -> tuple[float, float, float]:
    """(macro-F1, positive_at, negative_at) of the best neutral band on ``scored``."""
    best = (0.0, 0.0, 0.0)
    for positive_at in GRID:
        for negative_at in GRID:
            if negative_at <= positive_at:
                f1 = _macro_f1(scored, positive_at, negative_at)
                if f1 > best[0]:
                    best = (f1, positive_at, negative_at)
    return best


def _scored(path: str) -> dict[str, list[tuple[str, float]]]:
    examples = read_examples(path)
    scored: dict[str, list[tuple[str, float]]] = {}
    for example in examples:
        polarity = _ANALYZERS[example.language].polarity(example.text)
        scored.setdefault(example.language, []).append((example.label, polarity))
    return dict(sorted(scored.items()))


def tune(path: str) -> None:
    """Grid-search (positive_at, negative_at) per language for the best macro-F1."""
    for language, scored in _scored(path).items():
        f1, positive_at, negative_at = _best_band(scored)
        print(f"{language}: macro-F1 {f1:.3f} with positive_at={positive_at} negative_at={negative_at}")


def cross_validate(path: str, rounds: int = 20) -> None:
    """How much of the score comes from choosing the thresholds on the same messages.

    Each round splits every class of a language in two at random, chooses the band on one
    half and measures it on the other (both ways). The mean held-out macro-F1 is what the
    thresholds alone would give on unseen messages of the same kind; the word lists were also
    shaped by the dev set's misses, which this cannot measure.
    """
    for language, scored in _scored(path).items():
        rng = random.Random(20261122)
        held_out: list[float] = []
        for _ in range(rounds):
            halves: tuple[list, list] = ([], [])
            for label in sorted({gold for gold, _ in scored}):
                items = [item for item in scored if item[0] == label]
                rng.shuffle(items)
                halves[0].extend(items[: len(items) // 2])
                halves[1].extend(items[len(items) // 2 :])
            for tune_on, measure_on in (halves, halves[::-1]):
                _, positive_at, negative_at = _best_band(tune_on)
                held_out.append(_macro_f1(measure_on, positive_at, negative_at))
        mean = statistics.mean(held_out)
        print(
            f"{language}: tuned on all {_best_band(scored)[0]:.3f}, on the other half {mean:.3f} "
            f"(min {min(held_out):.3f}, max {max(held_out):.3f}, {len(held_out)} halves)"
        )


def errors(path: str, language: str) -> None:
    """Print the misclassified texts of one language with their polarity."""
    analyzer = _ANALYZERS[language]
    for example in read_examples(path):
        if example.language != language:
            continue
        predicted = analyzer.label(example.text)
        if predicted != example.label:
            polarity = analyzer.polarity(example.text)
            print(f"{example.label[:3]}>{predicted[:3]} {polarity:+.2f} {example.text[:160]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("--tune", action="store_true", help="search the neutral band per language")
    parser.add_argument("--errors", metavar="LANG", help="list the misclassified texts of LANG")
    parser.add_argument("--detect", action="store_true", help="ignore the lang field (detect it)")
    parser.add_argument(
        "--cross-validate", action="store_true", help="tune on half of each language, measure the other"
    )
    args = parser.parse_args()
    if args.tune:
        tune(args.file)
    elif args.cross_validate:
        cross_validate(args.file)
    elif args.errors:
        errors(args.file, args.errors)
    else:
        print(format_reports(evaluate(read_examples(args.file), sentiment.analyze, detect=args.detect)))
        if args.detect:
            examples = read_examples(args.file)
            right = sum(sentiment.detect_language(e.text) == e.language for e in examples)
            print(f"\nlanguage detection: {right}/{len(examples)} right")


if __name__ == "__main__":
    main()
