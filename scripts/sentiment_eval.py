"""Evaluate the sentiment analyzers and tune their neutral bands on a labelled file.

    python scripts/sentiment_eval.py ../shared/data/sentiment-dev.jsonl            # measure
    python scripts/sentiment_eval.py ../shared/data/sentiment-dev.jsonl --tune     # best bands
    python scripts/sentiment_eval.py FILE --errors es                              # misses

The dev set is research-only: it may tune the two thresholds per language (printed, then copied
by hand into english.py / lexicon.py), never train anything that ships. Nothing is written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.services import sentiment
from app.services.sentiment import _ANALYZERS
from app.services.sentiment.base import label_from_thresholds
from app.services.sentiment.evaluate import Report, evaluate, format_reports, read_examples


def tune(path: str) -> None:
    """Grid-search (positive_at, negative_at) per language for the best macro-F1."""
    examples = read_examples(path)
    grid = [round(-0.6 + 0.05 * step, 2) for step in range(25)]
    for language in sorted({e.language for e in examples}):
        analyzer = _ANALYZERS[language]
        scored = [(e.label, analyzer.polarity(e.text)) for e in examples if e.language == language]
        best = (0.0, 0.0, 0.0)
        for positive_at in grid:
            for negative_at in grid:
                if negative_at > positive_at:
                    continue
                report = Report(language)
                for gold, polarity in scored:
                    report.add(gold, label_from_thresholds(polarity, positive_at, negative_at), 0.0)
                if report.macro_f1 > best[0]:
                    best = (report.macro_f1, positive_at, negative_at)
        print(f"{language}: macro-F1 {best[0]:.3f} with positive_at={best[1]} negative_at={best[2]}")


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
    args = parser.parse_args()
    if args.tune:
        tune(args.file)
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
