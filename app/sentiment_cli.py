"""The ``earful sentiment`` and ``earful sentiment-eval`` commands.

    earful sentiment "some text" [--language L]    prints the label
    earful sentiment --jsonl FILE                   one {"label": ...} line per {"text", "lang"} line
    earful sentiment-eval [FILE] [--detect]         accuracy, macro-F1, confusion and µs per message

``app.cli`` plugs them in with :func:`add_sentiment_commands` and :func:`run_sentiment_command`;
``python -m app.sentiment_cli ...`` runs them on their own. No database is needed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

SENTIMENT_COMMANDS = ("sentiment", "sentiment-eval")
DEV_SET = Path("../shared/data/sentiment-dev.jsonl")
LANGUAGES = ("en", "es", "pt")


def add_sentiment_commands(subparsers: Any) -> None:
    """Add ``sentiment`` and ``sentiment-eval`` to the ``earful`` command's subparsers."""
    label = subparsers.add_parser("sentiment", help="label a text positive, neutral or negative")
    label.add_argument("text", nargs="?", help="the text (or use --jsonl)")
    label.add_argument("--language", choices=LANGUAGES, help="the text's language (default: detect it)")
    label.add_argument(
        "--jsonl",
        metavar="FILE",
        help='read {"text": ..., "lang": ...} lines from FILE ("-" for stdin), print {"label": ...} lines',
    )
    evaluation = subparsers.add_parser(
        "sentiment-eval", help="measure the analyzers on a labelled JSON-lines file"
    )
    evaluation.add_argument(
        "file", nargs="?", default=str(DEV_SET), help=f"lines with text, label, lang (default {DEV_SET})"
    )
    evaluation.add_argument("--detect", action="store_true", help="ignore lang and detect the language")
    evaluation.add_argument("--repeat", type=int, default=3, help="timing passes (the fastest counts)")


def _label_lines(source: TextIO, out: TextIO) -> int:
    from app.services.sentiment import analyze

    for number, line in enumerate(source, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            text = row["text"]
            if not isinstance(text, str):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            print(f"earful: line {number}: expected a JSON object with a text string", file=sys.stderr)
            return 1
        language = row.get("lang") or row.get("language") or None
        out.write(
            json.dumps({"label": analyze(text, language if isinstance(language, str) else None)}) + "\n"
        )
    return 0


def _sentiment(args: argparse.Namespace) -> int:
    from app.services.sentiment import analyze

    if args.jsonl:
        if args.text is not None:
            print("earful: give either a text or --jsonl, not both", file=sys.stderr)
            return 2
        if args.jsonl == "-":
            return _label_lines(sys.stdin, sys.stdout)
        with open(args.jsonl, encoding="utf-8") as source:
            return _label_lines(source, sys.stdout)
    if args.text is None:
        print("earful: give a text or --jsonl FILE", file=sys.stderr)
        return 2
    print(analyze(args.text, args.language))
    return 0


def _evaluate(args: argparse.Namespace) -> int:
    from app.services.sentiment import analyze
    from app.services.sentiment.evaluate import evaluate, format_reports, read_examples

    examples = read_examples(args.file)
    print(f"{args.file}: {len(examples)} messages" + (" (language detected)" if args.detect else ""))
    print(format_reports(evaluate(examples, analyze, repeat=args.repeat, detect=args.detect)))
    return 0


def run_sentiment_command(args: argparse.Namespace) -> int:
    """Run ``sentiment`` or ``sentiment-eval``; returns the exit status."""
    try:
        if args.command == "sentiment":
            return _sentiment(args)
        return _evaluate(args)
    except OSError as error:
        print(f"earful: {error}", file=sys.stderr)
        return 1


def main(argv: list[str] | None = None) -> int:
    """The two commands on their own: ``python -m app.sentiment_cli sentiment "text"``."""
    parser = argparse.ArgumentParser(prog="earful")
    add_sentiment_commands(parser.add_subparsers(dest="command", required=True))
    return run_sentiment_command(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
