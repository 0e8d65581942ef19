"""Translations of the texts that end users read (capture API responses), via gettext catalogs.

The catalogs are the ``.po`` files under ``app/translations``; they are compiled in memory at
import, so there is no build step and no compiled file to forget. Messages are marked in the
code with :func:`N_` so that ``make messages`` (pybabel extract) finds them.
"""

from __future__ import annotations

from functools import cache
from io import BytesIO
from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import NullTranslations, Translations

LANGUAGES = ("en", "es", "pt")
DEFAULT_LANGUAGE = "en"
TRANSLATIONS_DIR = Path(__file__).parent / "translations"


def N_(message: str) -> str:
    """Mark a message for extraction without translating it here."""
    return message


def normalize_language(value: object) -> str:
    """Return a supported language code, English for anything missing or unknown."""
    if isinstance(value, str):
        code = value.strip().lower().replace("_", "-").split("-", 1)[0]
        if code in LANGUAGES:
            return code
    return DEFAULT_LANGUAGE


@cache
def translations(language: str) -> NullTranslations:
    """Load the catalog of one language (English is the identity)."""
    po_path = TRANSLATIONS_DIR / language / "LC_MESSAGES" / "messages.po"
    if language == DEFAULT_LANGUAGE or not po_path.exists():
        return NullTranslations()
    with po_path.open("rb") as handle:
        catalog = read_po(handle, locale=language)
    buffer = BytesIO()
    write_mo(buffer, catalog)
    buffer.seek(0)
    return Translations(fp=buffer)


def translate(message: str, language: str, **params: object) -> str:
    """Translate one message into ``language`` and fill in its ``%(name)s`` parameters."""
    text = translations(normalize_language(language)).gettext(message)
    return text % params if params else text
