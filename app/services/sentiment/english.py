"""English sentiment with TextBlob's bundled lexicon (no corpus download needed)."""

from __future__ import annotations

from textblob import TextBlob

from app.services.sentiment.base import label_from_polarity

POLARITY_THRESHOLD = 0.1


class EnglishAnalyzer:
    """TextBlob polarity with a neutral band."""

    def label(self, text: str) -> str:
        return label_from_polarity(TextBlob(text).sentiment.polarity, POLARITY_THRESHOLD)
