"""The README and docs/ stay usable: no link a reader clicks is dead, the README stays a front page, and the two
commands it tells people to run are the ones CI runs (so what users type is what is tested).

Pure file reading: no import of the app, no process, well under a second.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
CI_SCRIPT = ROOT / ".ci" / "run"
README_MAX_LINES = 220

# `[text](target)` and `![alt](target)`, with an optional "title"; the target may be written `<...>`.
INLINE_LINK = re.compile(r"!?\[(?P<text>[^\]]*)\]\(\s*(?P<target><[^>]*>|[^)\s]+)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
# `[label]: target` reference definitions
REFERENCE_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(?P<target><[^>]*>|\S+)", re.MULTILINE)
FENCE = re.compile(r"^\s*(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
ATX_HEADING = re.compile(r"^ {0,3}(?P<hashes>#{1,6})(?:[ \t]+(?P<text>.*?))?(?:[ \t]+#+)?[ \t]*$")
HTML_ANCHOR = re.compile(r"<a\s+[^>]*?(?:name|id)\s*=\s*[\"'](?P<anchor>[^\"']+)[\"']", re.IGNORECASE)
SKIPPED_SCHEMES = ("http://", "https://", "mailto:")


@dataclass(frozen=True)
class Link:
    source: Path
    line: int
    target: str

    def __str__(self) -> str:
        return f"{self.source.relative_to(ROOT)}:{self.line}: ({self.target})"


def markdown_files() -> list[Path]:
    """The README and every page under docs/: the pages a reader follows links between."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) outside fenced code blocks: a link or heading shown as code is not one."""
    kept: list[tuple[int, str]] = []
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), 1):
        match = FENCE.match(line)
        if fence is None:
            if match:
                fence = match["fence"]
            else:
                kept.append((number, line))
        elif (
            match and match["fence"][0] == fence[0] and len(match["fence"]) >= len(fence) and not match["info"].strip()
        ):
            fence = None
    return kept


def without_code_spans(line_block: str) -> str:
    """The text with inline code spans blanked (same length, so positions keep their line): `[x](y)` in backticks is
    an example, not a link. Spans never cross a blank line, so callers pass one paragraph at a time."""
    return re.sub(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", lambda m: re.sub(r"[^\n]", " ", m[0]), line_block, flags=re.S)


def paragraphs(lines: list[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """Consecutive non-blank prose lines joined, with the number of their first line."""
    block: list[tuple[int, str]] = []
    for number, line in [*lines, (0, "")]:
        if line.strip() and (not block or number == block[-1][0] + 1):
            block.append((number, line))
            continue
        if block:
            yield block[0][0], "\n".join(text for _, text in block)
        block = [(number, line)] if line.strip() else []


def links_in(path: Path) -> list[Link]:
    """Every link and image in a markdown file, outside code blocks and code spans."""
    found: list[Link] = []
    for first_line, paragraph in paragraphs(prose_lines(path.read_text(encoding="utf-8"))):
        prose = without_code_spans(paragraph)
        for pattern in (INLINE_LINK, REFERENCE_DEFINITION):
            for match in pattern.finditer(prose):
                target = match["target"].removeprefix("<").removesuffix(">")
                found.append(Link(path, first_line + prose.count("\n", 0, match.start()), target))
    return found


def github_slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: the rendered text, lowercase, punctuation other than hyphens and
    spaces removed (letters, digits and underscores of any script stay), spaces made hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading renders as its text
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    kept = "".join(ch for ch in text if ch in "-_ " or unicodedata.category(ch)[0] in "LNM")
    return kept.replace(" ", "-")


def anchors_of(path: Path) -> set[str]:
    """The anchors a markdown file offers: its headings' slugs (a repeated one gets -1, -2, ...) and HTML anchors."""
    anchors: set[str] = set()
    seen: dict[str, int] = {}
    for _, line in prose_lines(path.read_text(encoding="utf-8")):
        heading = ATX_HEADING.match(line)
        if heading:
            slug = github_slug(heading["text"] or "")
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            anchors.add(slug if count == 0 else f"{slug}-{count}")
        anchors.update(match["anchor"] for match in HTML_ANCHOR.finditer(line))
    return anchors


def link_problem(link: Link) -> str | None:
    """Why a reader following the link would land nowhere, or None when it resolves (external links are not
    checked: that would need the network)."""
    if link.target.lower().startswith(SKIPPED_SCHEMES):
        return None
    path_part, _, anchor = link.target.partition("#")
    target = (link.source.parent / unquote(path_part)).resolve() if path_part else link.source
    if not target.is_relative_to(ROOT):
        return f"{link}: points outside the repository"
    if not target.exists():
        return f"{link}: no file {target.relative_to(ROOT)}"
    if anchor and target.suffix == ".md" and unquote(anchor).lower() not in anchors_of(target):
        return f"{link}: {target.relative_to(ROOT)} has no heading with anchor #{anchor}"
    return None


def first_sh_block_after(text: str, heading: str) -> str:
    """The first ```sh block after a heading line: where the README puts the command to copy."""
    lines = text.splitlines()
    assert heading in lines, f"the README has no heading {heading!r}"
    block: list[str] | None = None
    for line in lines[lines.index(heading) + 1 :]:
        stripped = line.strip()
        if block is None and stripped in ("```sh", "```bash", "```shell"):
            block = []
        elif block is not None and stripped.startswith("```"):
            return "\n".join(block)
        elif block is not None:
            block.append(line)
    raise AssertionError(f"no ```sh block after the README's heading {heading!r}")


def normalised_command(line: str) -> str:
    """A shell line as CI and the README both spell it: no trailing `# comment`, single spaces, and no `--quiet`
    (CI keeps its log short; the command is the same)."""
    command = re.split(r"(?:^|\s)#", line, maxsplit=1)[0]
    return " ".join(word for word in command.split() if word != "--quiet")


def ci_commands() -> set[str]:
    return {normalised_command(line) for line in CI_SCRIPT.read_text(encoding="utf-8").splitlines()} - {""}


# ---------------------------------------------------------------------------------------------------------- tests


@pytest.mark.parametrize("page", markdown_files(), ids=lambda path: str(path.relative_to(ROOT)))
def test_every_relative_link_and_anchor_in_the_docs_resolves(page: Path) -> None:
    problems = [problem for link in links_in(page) if (problem := link_problem(link))]
    assert not problems, "dead links:\n" + "\n".join(problems)


def test_every_docs_page_starts_with_a_title_and_the_index_lists_them_all() -> None:
    """A reader landing on any page sees what it is; a page missing from the index is never found."""
    pages = sorted(DOCS.glob("*.md"))
    assert pages, "docs/ has no pages"
    for page in pages:
        first = page.read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith("# "), f"{page.relative_to(ROOT)} does not start with a '# Title' line"
    listed = {link.target.partition("#")[0] for link in links_in(DOCS / "README.md")}
    missing = [page.name for page in pages if page.name != "README.md" and page.name not in listed]
    assert not missing, f"docs/README.md does not list {missing}"


def test_the_readme_stays_a_front_page() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines (at most {README_MAX_LINES}): move reference material into docs/"
    )


@pytest.mark.parametrize("heading", ["## Set up and run", "## Set up and test"])
def test_the_readme_commands_are_the_ones_ci_runs(heading: str) -> None:
    """Each `pip install ...` and test command the README gives is a line of .ci/run, so a broken install or test
    command fails CI instead of a user. `gpu-train-monitor` alone opens the window: CI smoke-tests it otherwise."""
    block = first_sh_block_after(README.read_text(encoding="utf-8"), heading)
    parts = [normalised_command(part) for line in block.splitlines() for part in line.split("&&")]
    checked = [part for part in parts if part and part != "gpu-train-monitor"]
    assert checked, f"the README's {heading!r} block has no command to check"
    ci = ci_commands()
    missing = [part for part in checked if part not in ci]
    commands = sorted(line for line in ci if line.startswith(("pip", "pytest")))
    assert not missing, f"README {heading!r} says {missing}, which .ci/run does not run (its commands: {commands})"


# The checks above must be able to fail: each helper against a case with a known answer.


def test_headings_get_githubs_anchors() -> None:
    assert github_slug("Will it fit? Predicted memory") == "will-it-fit-predicted-memory"
    assert github_slug("`info` and `--version`") == "info-and---version"
    assert github_slug("Set up and run") == "set-up-and-run"
    assert github_slug("[Where](x.md) the code_lives") == "where-the-code_lives"


def test_a_dead_link_or_anchor_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n## Part two\n\n## Part two\n\n"
        "[ok](#part-two) [ok](#part-two-1) [bad](#part-three) [gone](missing.md) ![img](nope.png)\n"
        "`[code](not-a-link.md)` and\n\n```sh\n[fenced](also-not.md)\n```\n",
        encoding="utf-8",
    )
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    targets = {link.target: link_problem(link) for link in links_in(page)}
    assert set(targets) == {"#part-two", "#part-two-1", "#part-three", "missing.md", "nope.png"}
    assert targets["#part-two"] is None and targets["#part-two-1"] is None
    assert all(targets[target] for target in ("#part-three", "missing.md", "nope.png"))


def test_ci_lines_are_compared_without_comments_or_quiet() -> None:
    assert (
        normalised_command('pip install --quiet -e ".[test]"   # README: set up + test') == 'pip install -e ".[test]"'
    )
    assert normalised_command("pytest   -n auto  # README: the test command") == "pytest -n auto"
    assert normalised_command("# a comment") == ""
