"""Reading an RFC 5322 message: its sender, its new text (without quotes or signature), its files.

Only the customer's own words matter: quoted history (``>`` lines, "On ... wrote:" blocks, Gmail
and Outlook separators) and the signature (after ``-- ``) are cut. HTML-only mail is turned into
text with the standard library's parser, dropping the quoted parts that mail clients mark.
"""

from __future__ import annotations

import email
import email.policy
import hashlib
import re
from dataclasses import dataclass
from email.message import EmailMessage, Message
from email.utils import getaddresses
from html.parser import HTMLParser

from app.i18n import normalize_language
from app.services.files import IncomingFile
from app.services.validation import normalize_email, storable


class MalformedMail(ValueError):
    """The bytes are not an e-mail message that Earful can read."""


@dataclass(frozen=True)
class ParsedMail:
    """What Earful keeps of one e-mail."""

    message_id: str
    sender_email: str | None
    sender_name: str
    subject: str
    text: str
    files: tuple[IncomingFile, ...] = ()
    language: str = "en"
    mailer: str = ""
    automatic: bool = False


# Lines that start the quoted history in the languages Earful speaks (and the usual separators).
_ATTRIBUTION = re.compile(
    r"^(On\s.+\bwrote|El\s.+\bescribi[oó]|Em\s.+\bescreveu|Le\s.+\ba\s+[ée]crit|Am\s.+\bschrieb)\s*:\s*$",
    re.IGNORECASE,
)
_SEPARATORS = (
    re.compile(r"^-{2,}\s*(Original Message|Mensaje original|Mensagem original)\s*-{2,}$", re.I),
    re.compile(r"^-{2,}\s*(Forwarded message|Mensaje reenviado|Mensagem encaminhada)\s*-{2,}$", re.I),
    re.compile(r"^_{10,}$"),
)
_HEADER_BLOCK = re.compile(r"^(From|De|Von)\s*:\s*\S", re.I)
_HEADER_FOLLOW = re.compile(
    r"^(Sent|Date|Enviado|Fecha|Data|Gesendet|To|Para|An|Subject|Asunto|Assunto)\s*:", re.I
)
_MOBILE_SIGNATURE = re.compile(
    r"^(Sent from my \w+.*|Get Outlook for \w+.*|Enviado desde mi \w+.*|Enviado do meu \w+.*)$", re.I
)


def strip_quoted(text: str) -> str:
    """Keep the new part of a message: cut quoted history, separators and the signature."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    kept: list[str] = []
    for index, line in enumerate(lines):
        stripped = line.strip()
        if line.rstrip() == "--":  # the signature separator ("-- "), and its trimmed form
            break
        if any(pattern.match(stripped) for pattern in _SEPARATORS):
            break
        # Attributions are often wrapped over two lines ("On ..., Jo <jo@x>\nwrote:").
        joined = f"{stripped} {lines[index + 1].strip()}" if index + 1 < len(lines) else stripped
        if _ATTRIBUTION.match(stripped) or (
            stripped.startswith(("On ", "El ", "Em ", "Le ", "Am ")) and _ATTRIBUTION.match(joined)
        ):
            break
        if _HEADER_BLOCK.match(stripped) and any(
            _HEADER_FOLLOW.match(following.strip()) for following in lines[index + 1 : index + 3]
        ):
            break
        if stripped.startswith(">"):
            continue
        kept.append(line.rstrip())
    while kept and (not kept[-1].strip() or _MOBILE_SIGNATURE.match(kept[-1].strip())):
        kept.pop()
    return _tidy("\n".join(kept))


def _tidy(text: str) -> str:
    """Trim the ends and keep at most one empty line in a row."""
    return re.sub(r"\n{3,}", "\n\n", text).strip()


# fmt: off
_BLOCKS = frozenset({
    "address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt", "footer", "form",
    "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "nav", "ol", "p", "pre",
    "section", "table", "tbody", "td", "th", "thead", "tr", "ul",
})
_VOID = frozenset({
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr",
})
# fmt: on
_HIDDEN = frozenset({"head", "script", "style", "title", "template"})
_PARAGRAPHS = frozenset({"p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "table", "pre", "hr"})


class _HtmlToText(HTMLParser):
    """Text of an HTML mail body, without what mail clients mark as quoted history."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping: str | None = None  # tag whose subtree is being dropped
        self.depth = 0
        self.pre = 0
        self.done = False
        self.link: str | None = None
        self.link_text: list[str] = []
        self.newlines = 2  # line breaks at the end of the text so far (none needed at the start)

    @staticmethod
    def _is_quote(tag: str, attributes: dict[str, str]) -> bool:
        classes = attributes.get("class", "").split()
        return tag == "blockquote" or bool(
            {"gmail_quote", "gmail_signature", "moz-cite-prefix", "yahoo_quoted"} & set(classes)
        )

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.done:
            return
        attributes = {name: value or "" for name, value in attrs}
        if self.skipping:
            if tag == self.skipping:
                self.depth += 1
            return
        if attributes.get("id") in ("appendonsend", "divRplyFwdMsg") or attributes.get("name") == "quote":
            self.done = True  # Outlook: everything after this marker is the quoted history
            return
        if tag in _HIDDEN or self._is_quote(tag, attributes):
            if tag not in _VOID:
                self.skipping, self.depth = tag, 1
            return
        if tag == "pre":
            self.pre += 1
        if tag in _BLOCKS:
            self._break(tag)
        if tag == "li":
            self.parts.append("- ")
            self.newlines = 0
        if tag == "a" and attributes.get("href", "").startswith(("http://", "https://")):
            self.link, self.link_text = attributes["href"], []

    def handle_endtag(self, tag: str) -> None:
        if self.done:
            return
        if self.skipping:
            if tag == self.skipping:
                self.depth -= 1
                if self.depth == 0:
                    self.skipping = None
            return
        if tag == "pre" and self.pre:
            self.pre -= 1
        if tag == "a" and self.link:
            if self.link not in "".join(self.link_text):
                self.parts.append(f" ({self.link})")
                self.newlines = 0
            self.link = None
        if tag in _BLOCKS:
            self._break(tag)

    def _break(self, tag: str) -> None:
        """End the current line; paragraphs also leave an empty line (never more than one)."""
        wanted = 2 if tag in _PARAGRAPHS else 1
        if self.newlines < wanted:
            self.parts.append("\n" * (wanted - self.newlines))
            self.newlines = wanted

    def handle_data(self, data: str) -> None:
        if self.done or self.skipping:
            return
        text = data if self.pre else re.sub(r"\s+", " ", data)
        self.parts.append(text)
        if text.strip():
            self.newlines = 0
        if self.link:
            self.link_text.append(text)

    def text(self) -> str:
        lines = [line.strip() for line in "".join(self.parts).replace("\xa0", " ").split("\n")]
        return _tidy("\n".join(lines))


def html_to_text(html: str) -> str:
    """Plain text of an HTML body, quoted history left out."""
    parser = _HtmlToText()
    parser.feed(html)
    parser.close()
    return parser.text()


def _part_text(part: Message) -> str:
    """The decoded text of a part, whatever its declared charset."""
    try:
        content = part.get_content()  # type: ignore[attr-defined]  # parts of an EmailMessage have it
        if isinstance(content, str):
            return content
    except (LookupError, UnicodeError, KeyError, AssertionError):
        pass
    payload = part.get_payload(decode=True)
    return payload.decode("utf-8", "replace") if isinstance(payload, bytes) else ""


def _body_text(message: EmailMessage) -> tuple[str, Message | None]:
    """The message's text (text/plain preferred, else HTML made text) and the part it came from."""
    for kind in ("plain", "html"):
        try:
            part = message.get_body(preferencelist=(kind,))
        except (KeyError, LookupError):
            part = None
        if part is not None and part.get_content_disposition() != "attachment":
            text = _part_text(part)
            return (strip_quoted(text) if kind == "plain" else strip_quoted(html_to_text(text))), part
    return "", None


def _attachments(message: EmailMessage, body: Message | None) -> list[IncomingFile]:
    """Every file part of the message (attachments and inline images), in order."""
    files: list[IncomingFile] = []
    for part in message.walk():
        if part.is_multipart() or part is body:
            continue
        filename = part.get_filename()
        disposition = part.get_content_disposition()
        if disposition != "attachment" and not filename:
            continue
        if part.get_content_type() in ("text/plain", "text/html") and disposition != "attachment":
            continue
        payload = part.get_payload(decode=True)
        if isinstance(payload, bytes) and payload:
            files.append(IncomingFile(filename or "attachment", payload))
    return files


def _clean_header(value: object, limit: int) -> str:
    text = " ".join(str(value or "").split())
    return storable(text)[:limit]


def _message_id(message: EmailMessage, raw: bytes) -> str:
    """The message's Message-ID; mail without one is known by a digest of its bytes."""
    value = "".join(str(message.get("Message-ID", "") or "").split())
    if value and len(value) <= 200:
        return value if value.startswith("<") else f"<{value}>"
    return f"<sha256-{hashlib.sha256(raw).hexdigest()}@earful.invalid>"


def _is_automatic(message: EmailMessage, envelope_sender: str | None) -> bool:
    """Auto-replies, bounces and list traffic: never turned into a conversation (mail loops)."""
    if envelope_sender is not None and envelope_sender.strip("<> ") == "":
        return True
    auto = str(message.get("Auto-Submitted", "no") or "no").strip().lower()
    precedence = str(message.get("Precedence", "") or "").strip().lower()
    return (
        auto != "no"
        or precedence in ("bulk", "junk", "list", "auto_reply")
        or "X-Autoreply" in message
        or "X-Autorespond" in message
    )


def parse_mail(raw: bytes, envelope_sender: str | None = None) -> ParsedMail:
    """Read the parts of an e-mail that Earful keeps; MalformedMail when it is not one."""
    if not raw.strip():
        raise MalformedMail("Empty message")
    try:
        return _parse(raw, envelope_sender)
    except MalformedMail:
        raise
    except Exception as error:  # the parser's failures (headers are parsed lazily) have no common type
        raise MalformedMail(f"Unreadable message: {error.__class__.__name__}") from None


def _parse(raw: bytes, envelope_sender: str | None) -> ParsedMail:
    message = email.message_from_bytes(raw, policy=email.policy.default)
    if not message.keys():
        raise MalformedMail("No headers")
    addresses = getaddresses([str(message.get("From", "") or "")])
    text, body = _body_text(message)
    name, address = addresses[0] if addresses else ("", "")
    return ParsedMail(
        message_id=_message_id(message, raw),
        sender_email=normalize_email(address) or normalize_email((envelope_sender or "").strip("<> ")),
        sender_name=_clean_header(name, 200),
        subject=_clean_header(message.get("Subject", ""), 500),
        text=storable(text),
        files=tuple(_attachments(message, body)),
        language=normalize_language(str(message.get("Content-Language", "") or "")),
        mailer=_clean_header(message.get("User-Agent") or message.get("X-Mailer") or "", 1000),
        automatic=_is_automatic(message, envelope_sender),
    )
