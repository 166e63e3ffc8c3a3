"""The instructor's flow in Chromium, as the learner's is in test_workshop_clean.py (issue 28).

On a fresh clone of this checkout, the clone's own ``make lab-instructor`` (JupyterLab rooted at
the checkout, ``LessonContentsManager``, jupytext's server extension) with autosave every second:

1. lesson 06's source, ``lessons/06_….md``, opened with *Open With → Jupytext Notebook*, is not
   modified once its kernel has started; when JupyterLab's autosave writes it anyway (the
   document marked dirty with nothing changed), the file keeps its bytes and ``git status``
   stays empty (before, every ```` ```{code-cell} ```` became ```` ```{code-cell} ipython3 ````
   and the kernelspec's display_name changed: 18 lines);
2. an edit of its first code cell, autosaved, changes exactly that line of the source, and
   ``make lessons`` (tools/build_lessons.py) rebuilds from it the two notebooks with the edit:
   ``--check`` then passes and a second build writes nothing.

Mirrors no RocketMQ class: the workbench's browser tier (CONTRIBUTING.md §4). Owns: the
instructor's open/autosave/edit scenario. Must not know: what lesson 06 teaches.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
LESSON = "06_pull_loop_flow_control"
SOURCE = f"lessons/{LESSON}.md"
#: Autosave on, every second (JupyterLab's default is 120 s), as the only user setting.
AUTOSAVE = {
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {
        "autosave": True,
        "autosaveInterval": 1,
    }
}

#: Open `path` with the "Jupytext Notebook" factory (the file browser's Open With menu), count
#: its saves from then on (window.__saves: started, ended), wait for its kernel's kernel_info
#: and spec (JupyterLab writes kernelspec and language_info into the notebook right after
#: them), and report whether the document is modified.
OPEN_WITH_JUPYTEXT = """async ([path]) => {
  const app = window.jupyterapp;
  await app.started; await app.restored;
  const panel = await app.commands.execute(
      'docmanager:open', {path: path, factory: 'Jupytext Notebook'});
  const saves = window.__saves = {started: 0, ended: 0};
  panel.context.saveState.connect((_, state) => {
    if (state === 'started') { saves.started += 1; } else { saves.ended += 1; }
  });
  await panel.context.ready; await panel.sessionContext.ready;
  const kernel = panel.sessionContext.session.kernel;
  await kernel.info; await kernel.spec;
  await new Promise(r => setTimeout(r, 0));  // after the metadata writes queued on those
  return {dirty: panel.context.model.dirty, path: panel.context.path,
          metadata: panel.context.model.sharedModel.getMetadata()};
}"""

#: Change the current notebook and wait for JupyterLab's autosave to write the change. First
#: wait until no save is in flight and nothing is unsaved (a save in flight during the change
#: would clear the modified mark without it); then ``["touch"]`` only marks the notebook
#: modified (the autosave writes it unchanged), ``["edit", old, new]`` replaces ``old`` by
#: ``new`` in its first code cell, as typing there would; then wait for a save started after
#: the change to end. The autosave waits 10 times its last save's duration (at least the
#: interval set), so a loaded machine may take tens of seconds. Resolves to the saves counted
#: before the change, the modified mark after the save and the cell's source; rejects after
#: 120 s.
CHANGE_THEN_AUTOSAVE = """async ([kind, old, new_]) => {
  const panel = window.jupyterapp.shell.currentWidget;
  const context = panel.context;
  const saves = window.__saves;
  const deadline = performance.now() + 120000;
  const until = async (done, what) => {
    while (!done()) {
      if (performance.now() > deadline) { throw new Error(`${what} within 120 s`); }
      await new Promise(r => setTimeout(r, 100));
    }
  };
  await until(() => saves.started === saves.ended && !context.model.dirty,
              'no quiet moment (a save in flight or unsaved changes)');
  const before = saves.started;
  const cell = panel.content.widgets.find(c => c.model.type === 'code').model.sharedModel;
  if (kind === 'touch') { context.model.dirty = true; }
  else { cell.setSource(cell.getSource().replace(old, new_)); }
  await until(() => saves.started > before && saves.ended === saves.started, 'no autosave');
  return {savesBefore: before, dirty: context.model.dirty, source: cell.getSource()};
}"""


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout  # fmt: skip


def _last_modified(url: str) -> str:
    with urllib.request.urlopen(f"{url}/api/contents/{SOURCE}?content=0", timeout=30) as resp:
        return json.loads(resp.read())["last_modified"]


def test_an_instructor_opens_autosaves_and_edits_a_lesson_source(tmp_path, make_lab, page):
    """The instructor's flow (module docstring): an unchanged source survives an autosave byte
    for byte; an edit is saved as that edit alone and rebuilds with `make lessons`."""
    clone = tmp_path / "checkout"
    subprocess.run(["git", "clone", "-q", "--shared", str(ROOT), str(clone)], check=True)
    source = clone / SOURCE
    original = source.read_bytes()
    with make_lab("lab-instructor", clone, settings=AUTOSAVE) as server:
        page.goto(f"{server.url}/lab?reset", wait_until="domcontentloaded")
        page.wait_for_function("() => !!window.jupyterapp", timeout=60_000)
        opened = page.evaluate(OPEN_WITH_JUPYTEXT, [SOURCE])
        assert opened["path"] == SOURCE
        assert opened["dirty"] is False, f"modified on open; metadata: {opened['metadata']}"
        # 1. an autosave of the unchanged source
        before = _last_modified(server.url)
        touched = page.evaluate(CHANGE_THEN_AUTOSAVE, ["touch", "", ""])
        assert (touched["savesBefore"], touched["dirty"]) == (0, False)  # nothing saved unasked
        assert _last_modified(server.url) != before  # the autosave did write the file
        assert source.read_bytes().decode() == original.decode()
        assert _git(clone, "status", "--porcelain", "--untracked-files=all") == ""
        # 2. a real edit, autosaved
        old = 'LEARNER = "your-name"\n'
        new = 'LEARNER = "your-name"  # type your name here\n'
        edited = page.evaluate(CHANGE_THEN_AUTOSAVE, ["edit", old, new])
        assert edited["dirty"] is False and new in edited["source"], edited
    text = original.decode()
    assert text.count(old) == 1
    assert source.read_text(encoding="utf-8") == text.replace(old, new)
    assert _git(clone, "status", "--porcelain") == f" M {SOURCE}\n"
    # make lessons (what its recipe runs), in the clone
    build = [sys.executable, "tools/build_lessons.py"]
    out = subprocess.run(build, cwd=clone, check=True, capture_output=True, text=True).stdout
    learner = f"notebooks/{LESSON}.ipynb"
    solutions = f"notebooks/solutions/{LESSON}_solutions.ipynb"
    assert out.splitlines() == [f"wrote {learner}", f"wrote {solutions}"]
    assert _git(clone, "status", "--porcelain") == (f" M {SOURCE}\n M {learner}\n M {solutions}\n")
    for nb in (learner, solutions):
        cells = json.loads((clone / nb).read_text(encoding="utf-8"))["cells"]
        code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
        assert new.strip() in code[0].splitlines()
    check = subprocess.run([*build, "--check"], cwd=clone, capture_output=True, text=True)
    n = 2 * len(list((clone / "lessons").glob("[0-9][0-9]_*.md")))  # learner + solutions
    assert (check.returncode, check.stdout) == (0, f"{n} notebooks up to date\n")
