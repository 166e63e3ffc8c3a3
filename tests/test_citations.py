"""Every citation in the repository resolves inside it (CONTRIBUTING.md §6).

Code, tests and lessons cite ``docs/design.md §N``, ``docs/reference.md §N``,
``docs/cpp-client.md §N``, ``CONTRIBUTING.md §N``, ``mechanisms.md "Heading"`` or RocketMQ's
source at tag ``rocketmq-all-4.9.3``. A citation of a document a contributor who clones the
repository does not have (the team's working notes, the source articles mqlab was first written
against) fails here, and so does a section number or heading that does not exist.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Documents that are not in the repository. The patterns are built from pieces so that this
#: file does not match itself.
OUTSIDE = re.compile(
    "|".join(
        [
            r"\bDESIGN " + "§",
            r"\bSTYLE " + "§",
            r"\b[Ff]acts " + "§",
            r"\b[Ss]eeds?[ -]0\d\d",
            "cpp-client" + "-wire",
            r"ecosystem( notes|\.md)",
            r"shared/(reference|seeds)",
            r"\.\./" + "shared",
            "machines/" + r"\w+\.md",
        ]
    )
)

SECTIONED = {
    "docs/design.md": ROOT / "docs" / "design.md",
    "docs/reference.md": ROOT / "docs" / "reference.md",
    "docs/cpp-client.md": ROOT / "docs" / "cpp-client.md",
    "CONTRIBUTING.md": ROOT / "CONTRIBUTING.md",
}
MECHANISMS = ROOT / "notebooks" / "mechanisms.md"

SECTION_REF = re.compile(
    r"(docs/design\.md|docs/reference\.md|docs/cpp-client\.md|CONTRIBUTING\.md)[\s#]*§(\d+(?:\.\d+)*)"
    r"((?:\s*(?:,|and|or|/|–|-)\s*§\d+(?:\.\d+)*)*)"
)
MECHANISM_REF = re.compile(r'mechanisms\.md "([^"\n]+)"')
TEXT_SUFFIXES = (".py", ".md", ".sh", ".ipynb", ".java", ".go", ".js", ".yaml", ".yml", ".toml")


def _tracked() -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    skip = {"tests/test_citations.py", "tests/lab/test_lesson_sources.py"}
    return [
        ROOT / f
        for f in out
        if f not in skip
        and (f.endswith(TEXT_SUFFIXES) or Path(f).name in ("Makefile", "run"))
        and (not f.startswith("datasets/") or f == "datasets/README.md")
    ]


def _sections(path: Path) -> set[str]:
    """Numbered headings (``## 6. Style``, ``### 10.4 …``) and, under a numbered heading,
    its numbered list items (``6.10`` for item 10 of section 6)."""
    found: set[str] = set()
    current = None
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^#{1,4}\s+(\d+(?:\.\d+)*)\.?\s", line)
        if m:
            found.add(m.group(1))
            current = m.group(1)
            continue
        item = re.match(r"^(\d+)\.\s", line)
        if item and current is not None:
            found.add(f"{current}.{item.group(1)}")
    return found


def _headings(path: Path) -> list[str]:
    return [
        re.sub(r"^#+\s*", "", line).replace("`", "").strip()
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.startswith("#")
    ]


def test_the_cited_documents_are_in_the_repository():
    missing = [name for name, path in SECTIONED.items() if not path.is_file()]
    assert missing == [] and MECHANISMS.is_file(), missing


def test_nothing_cites_a_document_outside_the_repository():
    hits = [
        f"{f.relative_to(ROOT)}:{n}: {line.strip()[:140]}"
        for f in _tracked()
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert hits == [], "\n".join(hits)


def test_every_section_citation_resolves():
    sections = {name: _sections(path) for name, path in SECTIONED.items()}
    bad = []
    count = 0
    for f in _tracked():
        text = f.read_text(encoding="utf-8")
        for m in SECTION_REF.finditer(text):
            numbers = [m.group(2), *re.findall(r"§(\d+(?:\.\d+)*)", m.group(3))]
            for number in numbers:
                count += 1
                if number.rstrip(".") not in sections[m.group(1)]:
                    line = text.count("\n", 0, m.start()) + 1
                    bad.append(f"{f.relative_to(ROOT)}:{line}: {m.group(1)} §{number}")
    assert bad == [], "\n".join(bad)
    assert count > 300  # the code does cite: this test is not vacuous


def test_every_mechanism_citation_names_a_heading_of_mechanisms_md():
    headings = _headings(MECHANISMS)
    bad = []
    count = 0
    for f in _tracked():
        text = f.read_text(encoding="utf-8")
        for m in MECHANISM_REF.finditer(text):
            count += 1
            if not any(h.startswith(m.group(1)) for h in headings):
                line = text.count("\n", 0, m.start()) + 1
                bad.append(f'{f.relative_to(ROOT)}:{line}: mechanisms.md "{m.group(1)}"')
    assert bad == [], "\n".join(bad)
    assert count > 100


@pytest.mark.parametrize(
    ("text", "outside"),
    [
        ("see " + "facts " + "§10.4", True),
        ("(seed" + " 003 step 2)", True),
        ("DESIGN" + " §1", True),
        ("docs/reference.md §10.4", False),
        ('mechanisms.md "Long polling" step 2', False),
        ("the seed 42 of a run", False),
    ],
)
def test_the_outside_pattern(text, outside):
    assert bool(OUTSIDE.search(text)) is outside


def test_sections_of_a_document_include_numbered_items(tmp_path):
    doc = tmp_path / "d.md"
    doc.write_text("# T\n\n## 6. Style\n\n1. one\n10. ten\n\n### 6.20 more\n", encoding="utf-8")
    assert _sections(doc) == {"6", "6.1", "6.10", "6.20"}
