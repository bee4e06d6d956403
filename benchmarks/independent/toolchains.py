"""Read the API documentation other projects wrote, as language toolchains ship it.

Round 2's sources (round 1 read Debian's lists, PyPI's names and Python docstrings):

- the first sentence of each ``/** */`` comment in the JDK's ``lib/src.zip`` (public
  ``java.*`` and ``javax.*`` packages of the ``java.*`` modules);
- the first sentence of each doc comment on an exported declaration of Go's standard
  library (``$GOROOT/src``, commands, ``internal`` and ``vendor`` left out);
- the first paragraph's first sentence of each item and method in the HTML docs of Rust's
  ``std`` (the ``rust-docs`` component), and the summaries of its module pages;
- the prose of the manual npm ships (``docs/content/**/*.md``);
- the ``<description>`` of each POM in a local Maven repository.

Markup is stripped (``{@code x}`` and ``[Name]`` keep their text, tags go) so a row reads
as a sentence a person could write in a plan. Only ``build2`` reads these files.
"""

from __future__ import annotations

import html
import re
import zipfile
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from xml.etree import ElementTree

from benchmarks.independent.sources import Candidate, sentences

__all__ = ["go_doc", "javadoc", "maven_poms", "npm_docs", "rust_doc"]

#: Tags that break a line stand for a space; inline ones (<code>, <i>, <a>...) for nothing,
#: so "<code>Map</code>s" reads "Maps".
_BREAK_TAG = re.compile(r"</?(?:br|p|li|dd|dt|div|tr|td|th|h\d)\b[^>]*>", re.I)
_TAG = re.compile(r"<[^>]+>")


def _first(text: str) -> str:
    """Return the first sentence of prose whose markup is gone ('' if none)."""
    found = sentences(html.unescape(_TAG.sub("", _BREAK_TAG.sub(" ", text))))
    return found[0] if found else ""


# --- the JDK's javadoc comments ------------------------------------------------------------

_JAVADOC = re.compile(r"/\*\*(?!\*)(.*?)\*/", re.S)
_INLINE = re.compile(r"\{@(\w+)\s*([^{}]*)\}")
#: A block element ends javadoc's summary as a full stop does.
_BLOCK = re.compile(r"<(?:p|pre|ul|ol|table|h\d|dl|blockquote|div|hr)\b", re.I)
_ANNOTATION = re.compile(r"@\w+(?:\.\w+)*(?:\([^)]*\))?")
_TYPE_NAME = re.compile(r"\b(?:class|interface|enum|record)\s+(\w+)")


def _inline(match: re.Match[str]) -> str:
    """Return the text an inline javadoc tag shows: a link's label or target, code as is."""
    tag, body = match.group(1), match.group(2).strip()
    if tag in ("link", "linkplain"):
        target, _, label = body.partition(" ")
        return label.strip() or target.lstrip("#").replace("#", ".")
    return "" if tag in ("docRoot", "inheritDoc") else body


def _javadoc_text(comment: str) -> str:
    """Return a javadoc comment's first sentence, its tags resolved ('' if it has none)."""
    lines = [line.strip().removeprefix("*").strip() for line in comment.splitlines()]
    body = []
    for line in lines:
        if line.startswith("@"):
            break  # the block tags (@param, @return...) follow the description
        body.append(line)
    text = " ".join(body).strip()
    if not text or "{@inheritDoc}" in text:
        return ""
    text = re.sub(r"^(?:<p>\s*)+", "", text, flags=re.I)
    text = _BLOCK.split(text, maxsplit=1)[0]
    while (resolved := _INLINE.sub(_inline, text)) != text:
        text = resolved
    return "" if "{@" in text else _first(text)


def _declared(after: str) -> str:
    """Return the name a javadoc comment documents, from the code after it."""
    head = re.split(r"[{;=(]", _ANNOTATION.sub(" ", after[:400]), maxsplit=1)[0]
    if found := _TYPE_NAME.search(head):
        return found.group(1)
    words = re.findall(r"\w+", head)
    return words[-1] if words else "?"


def _public_api(name: str) -> bool:
    """Tell whether a src.zip entry is a public API source file of a java.* module."""
    module, _, path = name.partition("/")
    return (
        module.startswith("java.")
        and path.startswith(("java/", "javax/"))
        and path.endswith(".java")
        and "/internal/" not in path
    )


def javadoc(src_zip: Path) -> Iterator[Candidate]:
    """Yield the first sentence of each javadoc comment in the JDK's public API sources."""
    with zipfile.ZipFile(src_zip) as archive:
        for name in sorted(n for n in archive.namelist() if _public_api(n)):
            source = archive.read(name).decode("utf-8", "replace")
            for match in _JAVADOC.finditer(source):
                if text := _javadoc_text(match.group(1)):
                    member = _declared(source[match.end() :])
                    yield Candidate("jdk-javadoc", f"{name}: {member}", text)


# --- Go's standard library doc comments ----------------------------------------------------

_GO_DECL = re.compile(
    r"^(?:package\s+(?P<package>\w+)"
    r"|func\s+(?:\(\s*\w*\s*\*?(?P<recv>\w+)(?:\[[^\]]*\])?\s*\)\s*)?(?P<func>\w+)"
    r"|(?:type|var|const)\s+(?P<name>\w+)"
    r"|\t(?P<member>\w+)\b)"
)
#: A doc link, "[Name]", "[pkg.Name]", "[*Name]" or "[RFC 9180]", shown as its text.
_GO_LINK = re.compile(r"\[(\*?[A-Za-z_][\w./]*|RFC \d+)\]")
_GO_GENERATED = re.compile(r"^// Code generated .* DO NOT EDIT\.$", re.M)
_GO_SKIPPED = frozenset(("cmd", "internal", "vendor", "testdata", "builtin"))


def _go_skipped(folder: str) -> bool:
    """Tell whether a folder holds no public standard library (the go tool skips _x and .x)."""
    return folder in _GO_SKIPPED or folder.startswith(("_", "."))


def _go_name(line: str) -> str:
    """Return the exported name a Go declaration line declares ('' if none is exported)."""
    decl = _GO_DECL.match(line)
    if decl is None:
        return ""
    if decl["package"]:
        return f"package {decl['package']}"
    if decl["func"]:
        names = [n for n in (decl["recv"], decl["func"]) if n]
        return ".".join(names) if all(n[0].isupper() for n in names) else ""
    name = decl["name"] or decl["member"]
    return name if name[0].isupper() else ""


def _go_summary(comment: list[str]) -> str:
    """Return the first sentence of a Go doc comment's first paragraph."""
    paragraph = []
    for line in comment:
        if not line.strip() or line.startswith((" ", "\t")):
            break  # a blank line ends the paragraph; an indented one is code or a list
        paragraph.append(line)
    text = _GO_LINK.sub(r"\1", " ".join(paragraph))
    found = sentences(text)  # plain text: "<" and "&" in it are Go's, not markup
    return "" if not found or text.startswith(("Deprecated:", "BUG(", "TODO")) else found[0]


def _go_file(text: str) -> Iterator[tuple[str, str]]:
    """Yield (name, first sentence) of each exported declaration's doc comment in a file."""
    comment: list[str] = []
    for line in text.splitlines():
        stripped = line.lstrip("\t")
        if stripped.startswith("//"):
            if not stripped.startswith(("//go:", "//line ", "//export ")):
                comment.append(stripped[2:].removeprefix(" "))
            continue
        if comment and (name := _go_name(line)) and (summary := _go_summary(comment)):
            yield name, summary
        comment = []


def go_doc(goroot: Path) -> Iterator[Candidate]:
    """Yield the doc comments of the exported API of Go's standard library."""
    src = goroot / "src"
    for path in sorted(src.rglob("*.go")):
        relative = path.relative_to(src)
        folders = relative.parts[:-1]
        if path.name.endswith("_test.go") or any(_go_skipped(folder) for folder in folders):
            continue
        code = path.read_text(encoding="utf-8", errors="replace")
        if _GO_GENERATED.search(code):
            continue  # written by a program, not a person
        for name, text in _go_file(code):
            yield Candidate("go-doc", f"{relative}: {name}", text)


# --- Rust's std, as rustdoc rendered it ----------------------------------------------------


class _RustPage(HTMLParser):
    """Collect a rustdoc page's summaries: each docblock's first paragraph, each <dd>."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, str]] = []
        self._anchor, self._item = "", ""
        self._want_p = False
        self._text: list[str] | None = None
        self._end = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        """Note where an anchor, a docblock, its paragraph or a summary <dd> opens."""
        attr = dict(attrs)
        classes = (attr.get("class") or "").split()
        if tag == "section" and attr.get("id"):
            self._anchor = (attr["id"] or "").replace("main-content", "")
        elif tag == "a" and attr.get("title") and self._text is None:
            self._item = (attr["title"] or "").rpartition(" ")[2]
        elif tag == "div" and "docblock" in classes:
            self._want_p = True
        elif tag == "p" and self._want_p and self._text is None:
            self._text, self._end, self._want_p = [], "p", False
        elif tag == "dd" and self._text is None:
            self._text, self._end = [], "dd"

    def handle_endtag(self, tag: str) -> None:
        """Keep a paragraph or summary when it closes."""
        if tag == self._end and self._text is not None:
            text = " ".join("".join(self._text).split()).removesuffix("Read more").strip()
            where = self._item if tag == "dd" else self._anchor
            self.found.append((where, text))
            self._text, self._end = None, ""
        elif tag == "div":
            self._want_p = False

    def handle_data(self, data: str) -> None:
        """Gather the text of the paragraph or summary being read."""
        if self._text is not None:
            self._text.append(data)


def rust_doc(html_root: Path, crate: str = "std") -> Iterator[Candidate]:
    """Yield the first sentence of each item, method and module summary in a crate's docs."""
    root = html_root / crate
    for path in sorted(root.rglob("*.html")):
        if path.name in ("all.html", "sidebar-items.html") or "hidden" in path.parts:
            continue
        page = _RustPage()
        page.feed(path.read_text(encoding="utf-8", errors="replace"))
        relative = path.relative_to(html_root)
        for where, text in page.found:  # the parser took the tags out: "<" left is text
            for sentence in sentences(text)[:1]:
                yield Candidate("rust-doc", f"{relative}: {where or 'top'}", sentence)


# --- npm's manual and Maven POMs -----------------------------------------------------------

_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MD_MARK = re.compile(r"`|\*\*|__")
_MD_EMPHASIS = re.compile(r"(?<!\w)_(\S(?:.*?\S)?)_(?!\w)")
_MD_ITEM = re.compile(r"^(?:[*+-]|\d+\.|[a-z]\))\s+")
_MD_NOT_PROSE = ("```", "#", "|", "<", ">")


def _md_paragraphs(text: str) -> Iterator[str]:
    """Yield the prose paragraphs of a Markdown page: no front matter, code, heading or table."""
    body = text.split("---", 2)[2] if text.startswith("---") else text
    paragraph: list[str] = []
    fenced = False
    for raw in [*body.splitlines(), ""]:
        line = raw.strip()
        fenced ^= line.startswith("```")
        item = _MD_ITEM.match(line)
        if paragraph and (fenced or item or not line or line.startswith(_MD_NOT_PROSE)):
            yield " ".join(paragraph)
            paragraph = []
        if not fenced and line and not line.startswith(_MD_NOT_PROSE):
            paragraph.append(_MD_ITEM.sub("", line))


def npm_docs(npm_root: Path) -> Iterator[Candidate]:
    """Yield the sentences of the manual npm ships (commands, configuration, usage)."""
    content = npm_root / "docs" / "content"
    for path in sorted(content.rglob("*.md")):
        relative = path.relative_to(content)
        for paragraph in _md_paragraphs(path.read_text(encoding="utf-8")):
            plain = _MD_EMPHASIS.sub(r"\1", _MD_MARK.sub("", _MD_LINK.sub(r"\1", paragraph)))
            for sentence in sentences(plain):
                yield Candidate("npm-docs", str(relative), sentence)


def maven_poms(repository: Path) -> Iterator[Candidate]:
    """Yield the sentences of each POM's <description> in a local Maven repository."""
    for path in sorted(repository.rglob("*.pom")):
        try:
            root = ElementTree.parse(path).getroot()  # noqa: S314 - a local, downloaded POM
        except ElementTree.ParseError:
            continue
        namespace = root.tag.partition("}")[0] + "}" if root.tag.startswith("{") else ""
        description = root.findtext(f"{namespace}description") or ""
        if "${" in description:
            continue  # a property the build fills in, not prose
        *group, artifact, version = path.parent.relative_to(repository).parts
        for sentence in sentences(description):
            yield Candidate("maven-poms", f"{'.'.join(group)}/{artifact} {version}", sentence)
