"""mqlab.lab.contents: the lab serves a notebook with its kernel's metadata, so it opens clean.

Mirrors no RocketMQ class (workbench plumbing, issue 13 defect 9). The browser check is
tests/e2e/test_notebooks_open_clean.py; here: the values, and that other notebooks are untouched.
A lesson source (lessons/NN.md, a jupytext notebook) opens clean too and saves unchanged to the
same bytes (issue 28; in the browser: tests/e2e/test_instructor_flow.py).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpec
from nbformat.v4 import new_code_cell, new_notebook

from mqlab.lab.contents import (
    LessonContentsManager,
    fill_kernel_metadata,
    keep_file_kernel_metadata,
    kernel_language_info,
)

ROOT = Path(__file__).resolve().parents[2]
SPEC = KernelSpec(
    argv=["python", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
    display_name="Python 3 (ipykernel)",
    language="python",
)


def test_language_info_is_what_ipykernel_reports():
    from ipykernel.ipkernel import IPythonKernel

    assert kernel_language_info() == IPythonKernel.language_info
    assert kernel_language_info()["version"] == sys.version.split()[0]


def test_a_lesson_gets_the_kernels_kernelspec_and_language_info():
    md = json.loads((ROOT / "notebooks" / "00_tour.ipynb").read_text(encoding="utf-8"))["metadata"]
    assert fill_kernel_metadata(md, SPEC, "python3") is True
    assert md["kernelspec"] == {
        "name": "python3",
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
    }
    assert md["language_info"] == kernel_language_info()


def test_other_kernels_and_other_pythons_are_left_alone():
    md = {"kernelspec": {"name": "ir", "display_name": "R"}, "language_info": {"name": "R"}}
    assert fill_kernel_metadata(md, SPEC, "python3") is False
    assert md == {"kernelspec": {"name": "ir", "display_name": "R"}, "language_info": {"name": "R"}}
    other = KernelSpec(argv=["/opt/py39/bin/python"], display_name="py39", language="python")
    md = {"kernelspec": {"name": "python3"}, "language_info": {"name": "python"}}
    assert fill_kernel_metadata(md, other, "python3") is False
    assert fill_kernel_metadata(md, None, "python3") is False
    assert md == {"kernelspec": {"name": "python3"}, "language_info": {"name": "python"}}


def test_the_manager_serves_filled_metadata_and_leaves_the_file(tmp_path):
    nb = new_notebook(cells=[new_code_cell("1 + 1")])
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    path = tmp_path / "lesson.ipynb"
    nbformat.write(nb, path)
    before = path.read_bytes()
    cm = LessonContentsManager(root_dir=str(tmp_path))
    cm._kernel_spec = lambda name: SPEC if name == "python3" else None  # no ServerApp parent here
    model = asyncio.run(cm.get("lesson.ipynb"))
    assert model["content"]["metadata"]["language_info"] == kernel_language_info()
    assert model["content"]["metadata"]["kernelspec"]["display_name"] == "Python 3 (ipykernel)"
    assert path.read_bytes() == before
    listing = asyncio.run(cm.get("lesson.ipynb", content=False))
    assert listing["content"] is None


# --- lesson sources (make lab-instructor: Open With -> Jupytext Notebook), issue 28 -----------

STEMS = sorted(p.stem for p in (ROOT / "lessons").glob("[0-9][0-9]_*.md"))
LESSON06 = "06_pull_loop_flow_control"
#: What JupyterLab writes into an open notebook once its kernel (SPEC, this Python) has started.
KERNEL_METADATA = {
    "kernelspec": {"name": "python3", "display_name": SPEC.display_name, "language": "python"},
    "language_info": kernel_language_info(),
}


def _served_manager(root: Path):
    """The contents manager a lab with ``--ServerApp.contents_manager_class=...LessonContentsManager``
    serves: jupytext's server extension (jupyterlab_jupytext) keeps a class that has jupytext's
    ``formats`` and wraps any other in jupytext's contents manager."""
    from jupytext.async_contentsmanager import build_async_jupytext_contents_manager_class

    cls = LessonContentsManager
    if not hasattr(cls, "formats"):
        cls = build_async_jupytext_contents_manager_class(cls)
    cm = cls(root_dir=str(root))
    cm._kernel_spec = lambda name: SPEC if name == "python3" else None  # no ServerApp parent here
    return cm


def _open_and_save(cm, path: str, edit=None) -> bool:
    """What JupyterLab does with a lesson source opened with the Jupytext Notebook factory: GET
    it as a notebook, start its kernel (which writes KERNEL_METADATA), apply ``edit`` to the
    cells (None: change nothing), then save (PUT) the whole model, as Ctrl-S or autosave do.
    Returns whether the kernel's start changed the served metadata (the tab turned "●")."""
    model = asyncio.run(cm.get(path, content=True, type="notebook"))
    assert model["type"] == "notebook"
    nb = json.loads(json.dumps(model["content"]))  # the JSON the browser holds
    dirty = any(nb["metadata"].get(k) != v for k, v in KERNEL_METADATA.items())
    nb["metadata"].update(json.loads(json.dumps(KERNEL_METADATA)))
    if edit is not None:
        edit(nb["cells"])
    asyncio.run(cm.save({"type": "notebook", "format": "json", "content": nb}, path))
    return dirty


@pytest.mark.parametrize("stem", STEMS)
def test_saving_an_unchanged_lesson_source_writes_the_same_bytes(tmp_path, stem):
    """An instructor opens lessons/NN.md as a notebook and saves it unchanged: the tab opens
    clean, and the file keeps its bytes (no `{code-cell} ipython3`, no machine display_name)."""
    (tmp_path / "lessons").mkdir()
    shutil.copy2(ROOT / "lessons" / f"{stem}.md", tmp_path / "lessons")
    before = (tmp_path / "lessons" / f"{stem}.md").read_bytes()
    dirty = _open_and_save(_served_manager(tmp_path), f"lessons/{stem}.md")
    after = (tmp_path / "lessons" / f"{stem}.md").read_bytes()
    assert after.decode() == before.decode()
    assert dirty is False


def _builder():
    """tools/build_lessons.py (what `make lessons` runs) as a module; tools/ is not a package."""
    import importlib.util

    name = "build_lessons"
    if name not in sys.modules:  # dataclasses need the module registered while it loads
        spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


def test_an_edit_saved_from_the_lab_is_the_edit_alone_and_builds_as_a_hand_edit(tmp_path):
    """A real edit (a code cell changed, a Markdown cell added) saved from the lab writes exactly
    that edit into lessons/06.md, the source stays in jupytext's own form, and `make lessons`
    builds from it the notebooks it builds from the same edit made in a text editor."""
    text = (ROOT / "lessons" / f"{LESSON06}.md").read_text(encoding="utf-8")
    old = 'LEARNER = "your-name"\n'
    new = 'LEARNER = "your-name"  # type your name here\n'
    note = "*Run the cell below first.*"
    assert text.count(old) == 1 and text.count("\n```{code-cell}\nfrom mqlab.lab import Lab") == 1
    by_hand = text.replace(old, new).replace(
        "\n```{code-cell}\nfrom mqlab.lab import Lab",
        f"\n{note}\n\n```{{code-cell}}\nfrom mqlab.lab import Lab",
    )

    def edit(cells):
        i = next(i for i, c in enumerate(cells) if c["cell_type"] == "code")
        cells[i]["source"] = cells[i]["source"].replace(old, new)
        cells[i - 1]["source"] += "\n\n" + note  # the Markdown cell above the first code cell

    lab, hand = tmp_path / "lab" / "lessons", tmp_path / "hand" / "lessons"
    lab.mkdir(parents=True)
    hand.mkdir(parents=True)
    (lab / f"{LESSON06}.md").write_text(text, encoding="utf-8")
    (hand / f"{LESSON06}.md").write_text(by_hand, encoding="utf-8")
    _open_and_save(_served_manager(tmp_path / "lab"), f"lessons/{LESSON06}.md", edit)
    saved = (lab / f"{LESSON06}.md").read_text(encoding="utf-8")
    assert saved == by_hand
    import jupytext

    assert jupytext.writes(jupytext.reads(saved, fmt="md:myst"), fmt="md:myst") == saved
    b = _builder()
    from_lab, from_hand = (
        b.read_lesson(lab / f"{LESSON06}.md"),
        b.read_lesson(hand / f"{LESSON06}.md"),
    )
    for solutions in (False, True):
        built = b.render(b.build(from_lab, solutions=solutions))
        assert built == b.render(b.build(from_hand, solutions=solutions))
        sources = ["".join(c["source"]) for c in json.loads(built)["cells"]]
        assert any(new in s for s in sources) and any(s.endswith(note) for s in sources)
    # opened again and saved unchanged: the same bytes
    _open_and_save(_served_manager(tmp_path / "lab"), f"lessons/{LESSON06}.md")
    assert (lab / f"{LESSON06}.md").read_text(encoding="utf-8") == saved


def test_a_save_keeps_the_files_kernel_metadata_unless_the_kernel_changed():
    """keep_file_kernel_metadata: same kernel name → the file's kernelspec and language_info (a
    key the file lacks goes); another kernel → the notebook is saved as it is."""
    on_disk = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}}
    md = json.loads(json.dumps(KERNEL_METADATA))
    assert keep_file_kernel_metadata(md, on_disk) is True
    assert md == on_disk
    other = {
        "kernelspec": {"name": "ir", "display_name": "R", "language": "R"},
        "language_info": {"name": "R"},
    }
    md = json.loads(json.dumps(other))
    assert keep_file_kernel_metadata(md, on_disk) is False
    assert md == other
