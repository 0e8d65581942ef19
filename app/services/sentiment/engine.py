"""A fast lexicon-and-rules scorer (VADER's ideas) shared by every language.

A language is described by a :class:`Rules` object: word and phrase valences, stems (prefixes)
for inflected forms, intensifiers, negators and contrast words. :func:`score` turns a text into
one number in [-1, 1]; the analyzers map it to a label with tuned thresholds. Everything is plain
dictionaries and one regular expression, so a message costs tens of microseconds.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

DATA_DIR = Path(__file__).parent / "data"

# Emoticons, words (with an inner apostrophe), emoji/pictographs, and the punctuation we read.
TOKEN = re.compile(
    r"(?:<3|[:;=8xX][-'^]?[)(\]\[dDpP/\\|*3oO]|[)(][-']?[:;=])(?![\w])"
    r"|[^\W\d_]+(?:'[^\W\d_]+)?"
    r"|[\U0001F000-\U0001FAFF\u2600-\u27BF\u2B50\u2764]"
    r"|[!?]+|[.,;:]"
)
REPEATS = re.compile(r"(.)\1{2,}")

NEGATION_SCALE = -0.74
BOOST = 0.293
CAPS_BOOST = 0.733
CONTRAST_BEFORE = 0.5
CONTRAST_AFTER = 1.5
NEGATION_WINDOW = 3
ALPHA = 15.0
MIXED = 0.3
QUESTION_SCALE = 0.3


# The combining marks of Latin accents (U+034F, the grapheme joiner, is not one).
_ACCENT_MARKS = re.compile("[\u0300-\u034e\u0350-\u036f]")
_NON_ASCII = re.compile("[^\x00-\x7f]")


def fold(text: str) -> str:
    """Lower-case and strip accents (users often type "nao", "pessimo", "rapido").

    Decomposed (NFKD), the common accents are removed by one regular expression; any other
    combining mark still in the text is found among its few distinct non-ASCII characters.
    """
    text = text.lower()
    if text.isascii():
        return text
    text = _ACCENT_MARKS.sub("", unicodedata.normalize("NFKD", text))
    if text.isascii() or not any(unicodedata.combining(c) for c in set(_NON_ASCII.findall(text))):
        return text
    return "".join(c for c in text if not unicodedata.combining(c))


# fold() for one token, remembered: a few thousand words make most of any text.
fold_token = functools.lru_cache(maxsize=200_000)(fold)


@dataclass
class Rules:
    """What the scorer knows about one language."""

    words: dict[str, float] = field(default_factory=dict)
    phrases: dict[tuple[str, ...], float] = field(default_factory=dict)
    stems: dict[str, float] = field(default_factory=dict)
    boosters: dict[str, float] = field(default_factory=dict)
    negators: set[str] = field(default_factory=set)
    contrast: set[str] = field(default_factory=set)
    stopwords: set[str] = field(default_factory=set)
    stem_lengths: tuple[int, ...] = ()
    phrase_lengths: dict[str, tuple[int, ...]] = field(default_factory=dict)
    _cache: dict[str, float] = field(default_factory=dict, repr=False)

    def add(self, term: str, valence: float) -> None:
        """Add one word, phrase (several words) or stem (ending in ``*``)."""
        term = fold(term.strip())
        if not term:
            return
        if term.endswith("*"):
            self.stems[term[:-1]] = valence
        elif " " in term:
            key = tuple(term.split())
            self.phrases[key] = valence
        else:
            self.words[term] = valence

    def finish(self) -> Rules:
        """Index the stems by length and the phrases by first word, once everything is loaded."""
        self.stem_lengths = tuple(sorted({len(s) for s in self.stems}, reverse=True))
        lengths: dict[str, set[int]] = {}
        for phrase in self.phrases:
            lengths.setdefault(phrase[0], set()).add(len(phrase))
        self.phrase_lengths = {word: tuple(sorted(sizes, reverse=True)) for word, sizes in lengths.items()}
        self._cache.clear()
        return self

    def valence(self, word: str) -> float:
        """The valence of one folded word: exact entry, a shortened repeat, or the longest stem."""
        cached = self._cache.get(word)
        if cached is not None:
            return cached
        value = self.words.get(word)
        if value is None and REPEATS.search(word):
            for candidate in (REPEATS.sub(r"\1\1", word), REPEATS.sub(r"\1", word)):
                if candidate in self.words:
                    value = self.words[candidate]
                    break
        if value is None:
            value = 0.0
            size = len(word)
            for length in self.stem_lengths:
                if length <= size and word[:length] in self.stems:
                    value = self.stems[word[:length]]
                    break
        if len(self._cache) < 200_000:
            self._cache[word] = value
        return value


def load_rules(*names: str) -> Rules:
    """Read data files (later files override earlier ones) into one :class:`Rules`.

    Format: ``[section]`` headers (words, boosters, negators, contrast, stopwords), then one
    entry a line: ``term<TAB>value`` (words, boosters) or just ``term``; lines starting with ``#``
    are comments.
    """
    rules = Rules()
    for name in names:
        section = "words"
        for raw in (DATA_DIR / name).read_text(encoding="utf-8").splitlines():
            line = raw.rstrip()
            if not line.strip() or line.startswith("#"):
                continue
            if line.startswith("[") and line.endswith("]"):
                section = line[1:-1]
                continue
            term, _, value = line.partition("\t")
            if section == "words":
                rules.add(term, float(value))
            elif section == "boosters":
                rules.boosters[fold(term.strip())] = float(value)
            elif section == "negators":
                rules.negators.add(fold(term.strip()))
            elif section == "contrast":
                rules.contrast.add(fold(term.strip()))
            elif section == "stopwords":
                rules.stopwords.add(fold(term.strip()))
    return rules.finish()


def tokens(text: str) -> list[str]:
    """The tokens of a text, case kept (ALL CAPS is a signal)."""
    return TOKEN.findall(text)


def _shouting_differs(raw: list[str]) -> bool:
    """Whether some words are in capitals and others not (capitals then stress a word)."""
    letters = [t for t in raw if t[0].isalpha()]
    return any(t.isupper() and len(t) > 1 for t in letters) and not all(t.isupper() for t in letters)


def _phrase_at(folded: list[str], i: int, rules: Rules) -> tuple[float, int]:
    """The valence and width of the longest phrase starting at ``i``; (0.0, 1) when none."""
    for size in rules.phrase_lengths.get(folded[i], ()):
        if size <= len(folded) - i:
            phrase = tuple(folded[i : i + size])
            if phrase in rules.phrases:
                return rules.phrases[phrase], size
    return 0.0, 1


def _intensified(
    value: float, i: int, raw: list[str], folded: list[str], rules: Rules, shouting: bool
) -> float:
    """A word's valence with the stress of capitals and of the boosters just before it."""
    if shouting and raw[i].isupper() and len(raw[i]) > 1:
        value += CAPS_BOOST if value > 0 else -CAPS_BOOST
    for back in (1, 2):
        j = i - back
        if j >= 0 and folded[j] in rules.boosters:
            boost = rules.boosters[folded[j]] * (1.0 if back == 1 else 0.95)
            value += boost if value > 0 else -boost
    return value


def _combined(sentiments: list[float], contrast_at: int, extra: float) -> float:
    """The sum of the words' valences: after a contrast word the part after it counts more, and
    mixed opinions ("nice colour, awful fit") lean neutral (part of the weaker side cancels)."""
    if contrast_at >= 0:
        sentiments = [
            s * (CONTRAST_BEFORE if k < contrast_at else CONTRAST_AFTER) for k, s in enumerate(sentiments)
        ]
    total = sum(sentiments) + extra
    positive = sum(v for v in sentiments if v > 0)
    negative = -sum(v for v in sentiments if v < 0)
    if positive and negative:
        weaker = min(positive, negative)
        total -= MIXED * weaker if total > 0 else -MIXED * weaker
    return total


def score(text: str, rules: Rules, extra: float = 0.0) -> float:
    """The text's polarity in [-1, 1]; ``extra`` is added to the raw sum (another scorer's view)."""
    raw = tokens(text)
    folded = [fold_token(t) for t in raw]
    shouting = _shouting_differs(raw)
    sentiments: list[float] = []
    contrast_at = -1
    negated_until = -1
    exclamations = 0
    questions = 0
    i = 0
    while i < len(folded):
        word = folded[i]
        if word[0] in "!?.,;:":
            if word[0] == "!":
                exclamations += word.count("!")
            questions += "?" in word
            negated_until = -1  # punctuation ends a negation's scope
            sentiments.append(0.0)
            i += 1
            continue
        if word in rules.contrast:
            contrast_at, negated_until = len(sentiments), -1
            sentiments.append(0.0)
            i += 1
            continue
        value, width = _phrase_at(folded, i, rules)  # phrases first (longest match), then the word
        if width == 1:
            if word in rules.negators:
                negated_until = i + NEGATION_WINDOW
                sentiments.append(rules.words.get(word, 0.0))  # "nao" alone leans negative
                i += 1
                continue
            if word in rules.boosters:
                sentiments.append(0.0)
                i += 1
                continue
            value = rules.valence(word)
        if value:
            value = _intensified(value, i, raw, folded, rules, shouting)
            fixed = width > 1 and any(w in rules.negators for w in folded[i : i + width])
            if not fixed and i <= negated_until:
                value *= NEGATION_SCALE
        sentiments.append(value)
        sentiments.extend([0.0] * (width - 1))
        i += width
    total = _combined(sentiments, contrast_at, extra)
    if questions and not exclamations and folded[-1][:1] == "?":
        total *= QUESTION_SCALE  # questions ask, they rarely judge
    if total:
        emphasis = min(exclamations, 4) * 0.292
        total += emphasis if total > 0 else -emphasis
    return total / math.sqrt(total * total + ALPHA)
