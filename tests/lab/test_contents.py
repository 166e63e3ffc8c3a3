"""mqlab.lab.contents: the lab serves a notebook with its kernel's metadata, so it opens clean.

Mirrors no RocketMQ class (workbench plumbing, issue 13 defect 9). The browser check is
tests/e2e/test_notebooks_open_clean.py; here: the values, and that other notebooks are untouched.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import nbformat
from jupyter_client.kernelspec import KernelSpec
from nbformat.v4 import new_code_cell, new_notebook

from mqlab.lab.contents import LessonContentsManager, fill_kernel_metadata, kernel_language_info

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
