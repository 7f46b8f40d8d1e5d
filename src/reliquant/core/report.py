"""The Snakemake HTML report's tables: markdown tables as self-contained HTML pages.

:func:`markdown_to_html` turns the markdown the workflow writes (pipe tables, headings,
paragraphs, lists, fenced code) into a small self-contained HTML page with a styled
``<table>``; the report embeds that page instead of the raw markdown, which it would show as
text. It is no general markdown implementation: inline markup is limited to code spans,
``**bold**``, ``*emphasis*`` and ``[links](url)``, and every other character is escaped, so a
cell's text can never become markup.

(The guard that makes ``snakemake --report`` refuse missing results is workflow code:
``workflow/report_guard.py``.)
"""

from __future__ import annotations

import html
import re

__all__ = ["STYLE", "markdown_body", "markdown_to_html", "split_row"]

#: Style of every page: readable tables (borders, zebra rows, sticky header, tabular digits).
STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; font-size: 14px;
       line-height: 1.45; color: #1f2328; margin: 1.5em; max-width: 80em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.25em; margin-top: 1.6em; } h3 { font-size: 1.1em; }
table { border-collapse: collapse; margin: 0.8em 0 1.2em; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #d0d7de; padding: 0.3em 0.7em; vertical-align: top; }
.l { text-align: left; } .c { text-align: center; } .r { text-align: right; }
thead th { background: #f0f3f6; position: sticky; top: 0; }
tbody tr:nth-child(even) { background: #f8f9fa; }
tbody tr:hover { background: #eef4ff; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 0.92em;
       background: #f0f3f6; padding: 0.1em 0.3em; border-radius: 3px; }
pre { background: #f6f8fa; padding: 0.8em; overflow-x: auto; }
pre code { background: none; padding: 0; }
""".strip()

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_DELIMITER_CELL = re.compile(r"^:?-+:?$")
_BULLET = re.compile(r"^\s*[-*+]\s+(.*)$")
_NUMBERED = re.compile(r"^\s*\d+[.)]\s+(.*)$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_RULE = re.compile(r"^\s*([-*_])(\s*\1){2,}\s*$")
_COMMENT = re.compile(r"^\s*<!--.*-->\s*$")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_STRONG = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_EMPHASIS = re.compile(r"(?<![*\w])\*(?=\S)(.+?)(?<=\S)\*(?![*\w])")
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
_BACKSLASH = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|<>])")
_STASHED = re.compile("\x00(\\d+)\x00")
_SAFE_URL = re.compile(r"^(https?://|mailto:|#|[\w./-]+$)", re.IGNORECASE)


# ----------------------------------------------------------------------------- inline markup
def _inline(text: str) -> str:
    """Escape ``text`` and apply the inline markup (code spans first: nothing inside them)."""
    parts = []
    last = 0
    for match in _CODE_SPAN.finditer(text):
        parts.append(_inline_plain(text[last : match.start()]))
        parts.append(f"<code>{html.escape(match.group(2).strip())}</code>")
        last = match.end()
    parts.append(_inline_plain(text[last:]))
    return "".join(parts)


def _inline_plain(text: str) -> str:
    """Escape ``text``; then links, bold, emphasis. A backslash escape stays a literal."""
    literals: list[str] = []

    def stash(match: re.Match[str]) -> str:
        literals.append(match.group(1))
        return f"\x00{len(literals) - 1}\x00"

    out = html.escape(_BACKSLASH.sub(stash, text), quote=True)
    out = _LINK.sub(_link, out)
    out = _STRONG.sub(r"<strong>\1</strong>", out)
    out = _EMPHASIS.sub(r"<em>\1</em>", out)
    return _STASHED.sub(lambda m: html.escape(literals[int(m.group(1))], quote=True), out)


def _link(match: re.Match[str]) -> str:
    label, url = match.group(1), html.unescape(match.group(2))
    if not _SAFE_URL.match(url):
        return match.group(0)
    return f'<a href="{html.escape(url, quote=True)}">{label}</a>'


# ---------------------------------------------------------------------------- pipe tables
def split_row(line: str) -> list[str]:
    """The cells of one pipe-table row: outer pipes optional, ``\\|`` a literal pipe."""
    text = line.strip()
    if text.startswith("|"):
        text = text[1:]
    if text.endswith("|") and not text.endswith("\\|"):
        text = text[:-1]
    cells, current, i = [], [], 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text) and text[i + 1] == "|":
            current.append("|")
            i += 2
            continue
        if char == "|":
            cells.append("".join(current).strip())
            current = []
        else:
            current.append(char)
        i += 1
    cells.append("".join(current).strip())
    return cells


def _is_delimiter(line: str) -> bool:
    if "-" not in line or "|" not in line:
        return False
    cells = split_row(line)
    return bool(cells) and all(_DELIMITER_CELL.match(cell.replace(" ", "")) for cell in cells)


def _alignment(cell: str) -> str | None:
    cell = cell.replace(" ", "")
    if cell.startswith(":") and cell.endswith(":"):
        return "center"
    if cell.endswith(":"):
        return "right"
    if cell.startswith(":"):
        return "left"
    return None


def _table(header: str, delimiter: str, body: list[str]) -> str:
    names = split_row(header)
    aligns = [_alignment(cell) for cell in split_row(delimiter)]
    aligns += [None] * (len(names) - len(aligns))

    def cell(tag: str, text: str, align: str | None) -> str:
        css = f' class="{align[0]}"' if align else ""  # .l .c .r of STYLE
        return f"<{tag}{css}>{_inline(text)}</{tag}>"

    lines = ["<table>", "<thead>", "<tr>"]
    lines += [cell("th", name, aligns[i]) for i, name in enumerate(names)]
    lines += ["</tr>", "</thead>", "<tbody>"]
    for row in body:
        cells = split_row(row)
        # GitHub's rule: a row has exactly the header's columns (missing ones empty, extra dropped)
        cells = (cells + [""] * len(names))[: len(names)]
        lines.append("<tr>" + "".join(cell("td", c, aligns[i]) for i, c in enumerate(cells)))
        lines[-1] += "</tr>"
    lines += ["</tbody>", "</table>"]
    return "\n".join(lines)


# ------------------------------------------------------------------------------- blocks
def markdown_body(text: str) -> str:
    """The HTML of the markdown ``text`` (no page around it)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    out: list[str] = []
    paragraph: list[str] = []
    i = 0

    def flush() -> None:
        if paragraph:
            out.append("<p>" + _inline(" ".join(s.strip() for s in paragraph)) + "</p>")
            paragraph.clear()

    while i < len(lines):
        line = lines[i]
        if not line.strip() or _COMMENT.match(line):
            flush()
            i += 1
            continue
        if _FENCE.match(line):
            flush()
            fence = _FENCE.match(line).group(1)
            i += 1
            code = []
            while i < len(lines) and not lines[i].strip().startswith(fence):
                code.append(lines[i])
                i += 1
            out.append("<pre><code>" + html.escape("\n".join(code)) + "</code></pre>")
            i += 1
            continue
        if heading := _HEADING.match(line):
            flush()
            level = len(heading.group(1))
            out.append(f"<h{level}>{_inline(heading.group(2))}</h{level}>")
            i += 1
            continue
        if "|" in line and i + 1 < len(lines) and _is_delimiter(lines[i + 1]):
            flush()
            header, delimiter = line, lines[i + 1]
            i += 2
            body = []
            while i < len(lines) and lines[i].strip() and "|" in lines[i]:
                body.append(lines[i])
                i += 1
            out.append(_table(header, delimiter, body))
            continue
        if _RULE.match(line) and not paragraph:
            out.append("<hr>")
            i += 1
            continue
        item_kind = "ul" if _BULLET.match(line) else "ol" if _NUMBERED.match(line) else None
        if item_kind:
            flush()
            pattern = _BULLET if item_kind == "ul" else _NUMBERED
            items: list[list[str]] = []
            while i < len(lines) and lines[i].strip():
                match = pattern.match(lines[i])
                if match:
                    items.append([match.group(1)])
                elif lines[i].startswith((" ", "\t")) and items:
                    items[-1].append(lines[i].strip())  # a continuation line of the item
                else:
                    break
                i += 1
            out.append(f"<{item_kind}>")
            out += [f"<li>{_inline(' '.join(item))}</li>" for item in items]
            out.append(f"</{item_kind}>")
            continue
        paragraph.append(line)
        i += 1
    flush()
    return "\n".join(out)


def markdown_to_html(text: str, title: str | None = None) -> str:
    """A self-contained HTML page (inline style, no scripts, no external files) of ``text``.

    ``title`` defaults to the text of the first heading, else "reliquant table".
    """
    if title is None:
        heading = next(
            (m.group(2) for line in text.splitlines() if (m := _HEADING.match(line))), None
        )
        title = heading or "reliquant table"
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n"
        f"<style>\n{STYLE}\n</style>\n</head>\n<body>\n"
        f"{markdown_body(text)}\n</body>\n</html>\n"
    )
