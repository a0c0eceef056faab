"""Griffe extension used by the documentation site (mkdocs.yml): turns the reST habits of
tokenmill's docstrings into Markdown for mkdocstrings, leaving the source unchanged.

- Sphinx roles (``:class:`Encoding```, ``:meth:`~Tokenizer.encode```) become code spans.
- A paragraph ending in ``::`` (reST's literal-block marker) ends in ``:`` (the indented block
  after it is already a Markdown code block); a doctest paragraph (``>>>``) becomes a code block.
- Notes for the package's developers (paragraphs starting "What lives here" or "May import")
  are left out of the user reference.

Hand-written because no Griffe extension on PyPI converts inline Sphinx roles (griffe-sphinx
only reads ``#:`` attribute comments).
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:class|func|meth|attr|mod|exc|data|obj):`~?([^`]+)`")
DEVELOPER_NOTE = re.compile(r"^(What lives here|May import)\b")


def markdown_docstring(text: str) -> str:
    """The docstring ``text`` with the reST habits above rewritten."""
    text = ROLE.sub(r"`\1`", text)
    paragraphs = [p for p in text.split("\n\n") if not DEVELOPER_NOTE.match(p.lstrip())]
    paragraphs = [f"```pycon\n{p}\n```" if p.startswith(">>>") else p for p in paragraphs]
    text = "\n\n".join(paragraphs)
    text = re.sub(r"^[ \t]*::$", "", text, flags=re.M)
    return re.sub(r"(\S)::$", r"\1:", text, flags=re.M)


class MarkdownDocstrings(griffe.Extension):
    """Rewrites every docstring of the loaded objects once the tree is complete."""

    def on_object(self, *, obj: griffe.Object, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown_docstring(obj.docstring.value)
