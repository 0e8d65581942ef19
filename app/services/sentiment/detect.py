"""Which of en, es and pt a text is written in, from its most common short words."""

from __future__ import annotations

import re

from app.services.sentiment.engine import fold

WORD = re.compile(r"[^\W\d_]+")
DETECT_CHARS = 160  # the start of a message says enough, and keeps long ones cheap


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words frequent in one language and rare in the other two (accents folded away).
MARKERS: dict[str, frozenset[str]] = {
    "en": _words(
        "the and is are was were it this that of to in for with my you i have has not but be on they "
        "what would will just very at an if your we from been do don't can all it's i'm love great "
        "good bad app work works doesn't didn't really too so get got like one its our"
    ),
    "es": _words(
        "el la los las del que y en es por con para como pero muy lo se me mi al su esta este ya no "
        "porque cuando todo hay yo nos le son tiene sin tambien fue ha he bien mas eso esto hoy "
        "una uno ni donde gracias bueno buena nada siempre pues solo tengo estoy hace ser aunque "
        "mucho muchos entre sus ese esa hasta les unos algo otra otro asi aqui"
    ),
    "pt": _words(
        "o os do da dos das que e em um uma para com nao no na por mais se foi muito meu minha ja "
        "voce eu ele isso esse essa ate quando mas pra tem ser ao seu sua mesmo ainda estou produto "
        "entrega recebi chegou pedido ta to tudo bem obrigado obrigada aqui nem sao vai como q vc "
        "so ou tambem pelo pela nos dia hoje agora gente kkk kkkk rs"
    ),
}
# Which languages each marker word points to: one look-up a word.
MARKED: dict[str, tuple[str, ...]] = {}
for _language, _words_of in MARKERS.items():
    for _word in _words_of:
        MARKED[_word] = (*MARKED.get(_word, ()), _language)

# Letters or endings that only one of the languages writes. ("ção" and "ções" are counted by
# their "ç"; an English contraction is a word, an apostrophe and its ending.)
HINTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("es", re.compile(r"ñ|¿|¡|ción\b|ciones\b")),
    ("pt", re.compile(r"[ãõç]|\bnão\b|[ln]h")),
    ("en", re.compile(r"(?<=\w)'(?:s|t|re|ll|ve|m|d)\b|\bth|ing\b")),
)


def detect_language(text: str, default: str = "en") -> str:
    """The most likely of en, es and pt; ``default`` when nothing points anywhere."""
    lowered = text[:DETECT_CHARS].lower()
    scores = {language: 0.0 for language in MARKERS}
    for word in WORD.findall(fold(lowered)):
        for language in MARKED.get(word, ()):
            scores[language] += 1.0
    for language, pattern in HINTS:
        scores[language] += 1.5 * len(pattern.findall(lowered))
    best = max(scores, key=lambda language: scores[language])
    if scores[best] == 0:
        return default
    return best
