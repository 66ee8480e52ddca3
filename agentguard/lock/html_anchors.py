"""The links of a PEP 503 (HTML) index page. A module of its own: the HTML parser is
imported only when an index serves HTML (PyPI answers the JSON form agentguard asks for)."""

from __future__ import annotations

from html.parser import HTMLParser


class AnchorParser(HTMLParser):
    """Every ``<a>`` of a page: its attributes and its text (``_text``)."""

    def __init__(self) -> None:
        super().__init__()
        self.anchors: list[dict[str, str | None]] = []
        self._current: dict[str, str | None] | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self._current = dict(attrs)
            self._text = []

    def handle_data(self, data: str) -> None:
        if self._current is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._current is not None:
            self._current["_text"] = "".join(self._text).strip()
            self.anchors.append(self._current)
            self._current = None
