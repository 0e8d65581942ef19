"""Sentiment of feedback text: one interface, one analyzer per language.

``analyze(text, language)`` returns ``positive``, ``neutral`` or ``negative``. English uses
TextBlob's lexicon; other languages plug in by registering an :class:`Analyzer`.
"""

from __future__ import annotations

from app.services.sentiment.base import Analyzer, label_from_polarity
from app.services.sentiment.english import EnglishAnalyzer

_ANALYZERS: dict[str, Analyzer] = {"en": EnglishAnalyzer()}


def register(language: str, analyzer: Analyzer) -> None:
    """Use ``analyzer`` for texts in ``language``."""
    _ANALYZERS[language] = analyzer


def analyze(text: str, language: str = "en") -> str:
    """Label a text; languages without an analyzer of their own fall back to English."""
    analyzer = _ANALYZERS.get(language) or _ANALYZERS["en"]
    return analyzer.label(text)


def warm_up() -> None:
    """Load the lexicons now, so that the first request pays nothing (stack notes §9)."""
    for analyzer in _ANALYZERS.values():
        analyzer.label("warm up")


__all__ = ["Analyzer", "analyze", "label_from_polarity", "register", "warm_up"]
