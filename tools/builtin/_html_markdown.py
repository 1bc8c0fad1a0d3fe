"""HTML to Markdown for WebFetch, with ``markdownify`` (MIT; on BeautifulSoup's stdlib parser).

Scripts, styles and other non-content elements are dropped *with* their text before the
conversion (markdownify's own ``strip`` keeps the text of a stripped tag). Imported only when a
page is converted, so start-up never pays for BeautifulSoup.
"""

from __future__ import annotations

import re

__all__ = ["html_to_markdown"]

_DROP = ("script", "style", "noscript", "template", "svg", "iframe", "head")
_BLANK_RUNS = re.compile(r"\n[ \t]*(?:\n[ \t]*){2,}")


def html_to_markdown(html: str) -> str:
    """The page's content as Markdown: headings ATX-style, links kept, blank runs collapsed."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup.find_all(_DROP):
        tag.decompose()
    body = MarkdownConverter(heading_style="ATX", bullets="-").convert_soup(soup)
    text = _BLANK_RUNS.sub("\n\n", body).strip()
    if title and not text.startswith(("# ", title)):
        text = f"# {title}\n\n{text}" if text else f"# {title}"
    return text
