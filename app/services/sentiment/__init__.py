"""Sentiment of feedback text: one interface, one analyzer per language.

``analyze(text, language)`` returns ``positive``, ``neutral`` or ``negative``. English scores
with TextBlob's lexicon plus VADER's, Spanish with Earful's own word lists, Portuguese with LeIA
and Earful's lists; all three share the rule engine in :mod:`.engine` (negation, contrast,
intensifiers, emoji, emphasis). Without a language, :func:`detect_language` picks one. Other
languages plug in by registering an :class:`Analyzer`. Every resource and its licence is listed
in LICENSES.md.
"""

from __future__ import annotations

from app.services.sentiment.base import Analyzer, label_from_polarity, label_from_thresholds
from app.services.sentiment.detect import detect_language
from app.services.sentiment.english import EnglishAnalyzer
from app.services.sentiment.lexicon import portuguese, spanish

_ANALYZERS: dict[str, Analyzer] = {"en": EnglishAnalyzer(), "es": spanish(), "pt": portuguese()}


def register(language: str, analyzer: Analyzer) -> None:
    """Use ``analyzer`` for texts in ``language``."""
    _ANALYZERS[language] = analyzer


# Longer messages are read at their start and their end only, which bounds the cost of any
# message whatever its length (README, Sentiment, has the cost per message): feedback states its
# point first and sums it up last.
HEAD_CHARS = 350
TAIL_CHARS = 150


def excerpt(text: str) -> str:
    """The part of a text the analyzers read: all of it, or its start and its end."""
    if len(text) <= HEAD_CHARS + TAIL_CHARS:
        return text
    head = text[:HEAD_CHARS].rsplit(None, 1)[0]
    tail = text[-TAIL_CHARS:].split(None, 1)[-1]
    return f"{head} . {tail}"


def analyze(text: str, language: str | None = None) -> str:
    """Label a text; without a language it is detected, unknown languages fall back to English."""
    text = excerpt(text)
    if not language:
        language = detect_language(text)
    analyzer = _ANALYZERS.get(language) or _ANALYZERS["en"]
    return analyzer.label(text)


def warm_up() -> None:
    """Load the lexicons now, so that the first request pays nothing (stack notes §9)."""
    for analyzer in _ANALYZERS.values():
        analyzer.label("warm up")


__all__ = [
    "Analyzer",
    "analyze",
    "detect_language",
    "label_from_polarity",
    "label_from_thresholds",
    "register",
    "warm_up",
]
