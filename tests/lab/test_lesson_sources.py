"""The lesson sources (lessons/NN_name.md, jupytext MyST) and the notebooks built from them.

Mirrors no RocketMQ class: this guards the workbench's own lesson pipeline (issue 13, "Lesson
sources an instructor can edit"). CI runs it, so a source edited without `make lessons` fails here.
Owns: tools/build_lessons.py's contract (learner and solutions copies, exercise and solution tags,
byte-stable output). Must not know: what a lesson teaches.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

from mqlab.lab import lessons  # noqa: F401  (importing registers the exercises)
from mqlab.lab.check import EXERCISES

ROOT = Path(__file__).resolve().parents[2]
STEMS = sorted(p.stem for p in (ROOT / "lessons").glob("[0-9][0-9]_*.md"))


def builder():
    """tools/build_lessons.py as a module (tools/ is not a package)."""
    name = "build_lessons"
    if name not in sys.modules:  # dataclasses need the module registered while it loads
        spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


def test_every_lesson_has_a_learner_and_a_solutions_notebook():
    assert [s[:2] for s in STEMS] == [f"{i:02d}" for i in range(15)]
    b = builder()
    assert sorted(b.targets()) == sorted(
        [ROOT / "notebooks" / f"{s}.ipynb" for s in STEMS]
        + [ROOT / "notebooks" / "solutions" / f"{s}_solutions.ipynb" for s in STEMS]
    )


def test_committed_notebooks_are_up_to_date_with_their_sources():
    """Every notebook is byte for byte what its source builds: edit lessons/, run `make lessons`."""
    stale = [str(p.relative_to(ROOT)) for p in builder().stale()]
    assert stale == [], f"out of date with lessons/*.md, run `make lessons`: {stale}"


@pytest.mark.parametrize("stem", STEMS)
def test_build_is_byte_stable_and_has_no_outputs(stem):
    b = builder()
    lesson = b.read_lesson(ROOT / "lessons" / f"{stem}.md")
    for solutions in (False, True):
        text = b.render(b.build(lesson, solutions=solutions))
        assert text == b.render(b.build(b.read_lesson(ROOT / "lessons" / f"{stem}.md"),
                                        solutions=solutions))  # fmt: skip
        nb = json.loads(text)
        assert (nb["nbformat"], nb["nbformat_minor"]) == (4, 5)
        ids = [c["id"] for c in nb["cells"]]
        assert len(set(ids)) == len(ids) and all(re.fullmatch(r"[a-z0-9-]{1,64}", i) for i in ids)
        assert set(nb["metadata"]) == {"kernelspec", "language_info"}
        for c in nb["cells"]:
            assert c["metadata"] == {}
            if c["cell_type"] == "code":
                assert c["outputs"] == [] and c["execution_count"] is None


@pytest.mark.parametrize("stem", STEMS)
def test_learner_copy_hides_the_worked_answers(stem):
    """Each solution-tagged cell is in the solutions copy only; both copies check each exercise."""
    b = builder()
    lesson = b.read_lesson(ROOT / "lessons" / f"{stem}.md")
    learner = [c.source for c in b.build(lesson, solutions=False).cells]
    solution = [c.source for c in b.build(lesson, solutions=True).cells]
    worked = [
        c.source.strip("\n") for c in lesson.cells if "solution" in c.metadata.get("tags", [])
    ]
    ids = [re.match(r"### Exercise (\S+)", s).group(1) for s in learner if s.startswith("### Ex")]
    assert worked and len(worked) == len(ids)
    for text in worked:
        assert text in solution and text not in learner
    for ex_id in ids:
        # the answer and its check share one cell: a failing answer line stops the check
        own = [x for x in learner if f'check("{ex_id}", answer, seed=SEED)' in x.splitlines()]
        assert len(own) == 1 and own[0].startswith("answer = ...")
        assert solution.count(f'assert check("{ex_id}", answer, seed=SEED)') == 1
        heading = next(s for s in learner if s.startswith(f"### Exercise {ex_id}\n"))
        assert EXERCISES[ex_id].question in heading
    assert solution[0].splitlines()[0].endswith(" — solutions")


def test_every_registered_exercise_is_in_exactly_one_lesson():
    text = "\n".join((ROOT / "lessons" / f"{s}.md").read_text(encoding="utf-8") for s in STEMS)
    in_sources = re.findall(r"^### Exercise (\d\d\.\d+)$", text, flags=re.M)
    assert sorted(in_sources) == sorted(EXERCISES)


SOURCE = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
---

# 98 · A test lesson

```{code-cell}
x = 1
```
"""


@pytest.mark.parametrize(
    ("tail", "message"),
    [
        ('+++ {"tags": ["exercise"]}\n\n### Exercise 00.1\n', "has no solution cell"),
        ('```{code-cell}\n:tags: [solution]\n\nanswer = 2\n```\n', "after an exercise heading"),
        ('+++ {"tags": ["exercise"]}\n\n### Exercise 00.1\n\n'
         '```{code-cell}\n:tags: [solution]\n\nx = 2\n```\n', "must set `answer`"),
        ('+++ {"tags": ["exercise"]}\n\n## Exercise one\n', "holds only '### Exercise NN.k'"),
    ],
)  # fmt: skip
def test_malformed_sources_are_refused_with_the_cell_named(tmp_path, tail, message):
    path = tmp_path / "98_test.md"
    path.write_text(SOURCE + "\n" + tail, encoding="utf-8")
    with pytest.raises(builder().SourceError, match=re.escape(message)):
        builder().read_lesson(path)


def test_an_unregistered_exercise_is_refused(tmp_path):
    path = tmp_path / "98_test.md"
    path.write_text(
        SOURCE + '\n+++ {"tags": ["exercise"]}\n\n### Exercise 98.1\n\n'
        "```{code-cell}\n:tags: [solution]\n\nanswer = 2\n```\n",
        encoding="utf-8",
    )
    b = builder()
    with pytest.raises(b.SourceError, match="98.1 is not registered"):
        b.build(b.read_lesson(path), solutions=False)


# -- what a learner reads cites only what a learner can open (issue 13, defects 4 and 5) ------
#: Citations of texts that are not in the repository or on the web.
INTERNAL_CITATION = re.compile(
    r"[Ss]eeds? 00\d|seed 003's|facts §|\.\./shared|shared/seeds|DESIGN §|STYLE §|"
    r"ecosystem notes §|\blines \d+[–-]\d+"
)
CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
ROCKETMQ_LINK = re.compile(r"https://github\.com/apache/rocketmq/[^\s)\"'>]+")


def _learner_facing() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "datasets" / "README.md"]
    files += sorted((ROOT / "lessons").glob("*.md"))
    files += sorted((ROOT / "notebooks").rglob("*.md")) + sorted(
        (ROOT / "notebooks").rglob("*.ipynb")
    )
    files += sorted((ROOT / "mqlab" / "lab").rglob("*.py"))
    return [f for f in files if ".ipynb_checkpoints" not in f.parts]


def test_no_citation_a_learner_cannot_open():
    hits = [
        f"{f.relative_to(ROOT)}:{n}: {line.strip()[:120]}"
        for f in _learner_facing()
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1)
        if INTERNAL_CITATION.search(line)
    ]
    assert hits == [], "\n".join(hits)


def test_no_untranslated_cjk_text():
    hits = [
        f"{f.relative_to(ROOT)}:{n}"
        for f in _learner_facing()
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1)
        if CJK.search(line)
    ]
    assert hits == [], hits


def test_rocketmq_links_point_at_the_4_9_3_tag_with_lines():
    links = [u for f in _learner_facing() for u in ROCKETMQ_LINK.findall(f.read_text("utf-8"))]
    assert len(links) > 50
    for u in links:
        assert u.startswith("https://github.com/apache/rocketmq/blob/rocketmq-all-4.9.3/"), u
        assert u.split("#")[0].endswith(".java"), u
    with_lines = [u for u in links if re.search(r"#L\d+(-L\d+)?$", u)]
    assert len(with_lines) >= 0.9 * len(links)


def test_relative_links_in_lessons_resolve_from_both_copies():
    """A link written relative to notebooks/ opens from the learner copy and, with ../, from the
    solutions copy (the lab's file browser starts at notebooks/: nothing above it is reachable)."""
    b = builder()
    for stem in STEMS:
        lesson = b.read_lesson(ROOT / "lessons" / f"{stem}.md")
        for solutions, base in (
            (False, ROOT / "notebooks"),
            (True, ROOT / "notebooks" / "solutions"),
        ):
            for cell in b.build(lesson, solutions=solutions).cells:
                if cell.cell_type != "markdown":
                    continue
                for target in re.findall(r"\]\(([^)\s]+)\)", cell.source):
                    if re.match(r"[a-z][a-z0-9+.-]*:|#", target):
                        continue
                    path = (base / target.split("#")[0]).resolve()
                    assert path.exists(), f"{stem}: {target} from {base.relative_to(ROOT)}"
                    assert (ROOT / "notebooks") in [path, *path.parents], target


@pytest.mark.parametrize("stem", STEMS)
def test_sources_are_in_jupytexts_own_form(stem):
    """Reading and writing a source with jupytext changes nothing, so saving it from JupyterLab's
    jupytext editor (Open With → Jupytext Notebook) gives no spurious diff."""
    import jupytext

    text = (ROOT / "lessons" / f"{stem}.md").read_text(encoding="utf-8")
    assert jupytext.writes(jupytext.reads(text, fmt="md:myst"), fmt="md:myst") == text


@pytest.mark.parametrize("stem", STEMS)
def test_sources_carry_no_machine_metadata(stem):
    """A source names its kernel as the notebooks do and its code cells carry no language: what a
    lab's kernel adds on open (the installed ipykernel's display_name, `{code-cell} ipython3`)
    never lands in lessons/ (issue 28; the lab saves a source with its own front matter)."""
    import jupytext

    path = ROOT / "lessons" / f"{stem}.md"
    nb = jupytext.read(path, fmt="md:myst")
    assert nb.metadata["kernelspec"] == builder().METADATA["kernelspec"]
    assert "language_info" not in nb.metadata
    text = path.read_text(encoding="utf-8")
    directives = re.findall(r"^`{3,}\{code-cell\}(.*)$", text, flags=re.M)
    assert directives and set(directives) == {""}, sorted(set(directives))
