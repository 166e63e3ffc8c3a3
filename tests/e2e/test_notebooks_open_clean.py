"""Opening a lesson must not mark it modified ("●") before the learner edits anything.

Mirrors no RocketMQ class: this is the workbench's browser tier (issue 13, defect 9: "a notebook
shows as modified the moment it opens"). JupyterLab writes the kernel's `kernelspec` and
`language_info` (with the Python patch version) into the notebook's metadata when the kernel
starts; any difference from the file turns the document dirty. The lab server (`make lab`, and
the `jupyter_server` fixture) serves notebooks through mqlab.lab.contents.LessonContentsManager,
which fills in exactly those values, so the write changes nothing.
Owns: the open-and-wait scenario. Must not know: what the lessons contain.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from .conftest import JupyterServer

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]

#: Open the current notebook, wait for its kernel's kernel_info and the metadata update that
#: follows it, and report the model's dirty flag and metadata.
OPEN_AND_SETTLE = """async () => {
  const app = window.jupyterapp;
  await app.started; await app.restored;
  const panel = app.shell.currentWidget;
  await panel.context.ready; await panel.sessionContext.ready;
  await panel.sessionContext.session.kernel.info;
  await panel.sessionContext.session.kernel.spec;
  await new Promise(r => setTimeout(r, 1500));
  return {dirty: panel.context.model.dirty,
          metadata: JSON.stringify(panel.context.model.sharedModel.getMetadata())};
}"""


@pytest.mark.parametrize("name", ["00_tour"])
def test_a_lesson_opens_unmodified(jupyter_server: JupyterServer, page: Page, name: str) -> None:
    src = ROOT / "notebooks" / f"{name}.ipynb"
    shutil.copy2(src, jupyter_server.root_dir / src.name)
    page.goto(f"{jupyter_server.url}/lab/tree/{src.name}", wait_until="domcontentloaded")
    page.wait_for_function(
        "() => window.jupyterapp?.shell?.currentWidget?.sessionContext !== undefined",
        timeout=60_000,
    )
    state = page.evaluate(OPEN_AND_SETTLE)
    on_disk = json.loads(src.read_text(encoding="utf-8"))["metadata"]
    assert state["dirty"] is False, (
        f"{name} is modified on open; metadata in the lab: {state['metadata']}, on disk: {on_disk}"
    )
