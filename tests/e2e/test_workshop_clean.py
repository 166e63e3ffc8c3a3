"""A workshop leaves the repository clean (issue 20, defects 8 and 9), with a real server.

On a fresh clone of this checkout: ``python -m mqlab lab prepare`` (what ``make lab`` runs
first), then ``jupyter lab`` with ``make lab``'s flags (rooted at ``work/``, the
``LessonContentsManager``). A learner's edit of lesson 06 is saved through the contents API,
exactly the request JupyterLab's save and autosave send (PUT /api/contents/<path>). The
clone's ``git status --porcelain`` stays empty (so ``tools/build_lessons.py --check`` has
nothing to call stale), and the edit is in ``work/``. Then ``make reset-lesson``'s command restores it.

The instructor server (``make lab-instructor``: rooted at the checkout) serves
``lessons/06_….md`` as a notebook: that is the request JupyterLab's *Open With → Jupytext
Notebook* makes, and it works because jupytext's server extension (``jupyterlab_jupytext``,
installed with jupytext, one of mqlab's dependencies) wraps the contents manager.

These two need no browser (marked slow, not e2e: they run without Chromium). Two more
run in Chromium (marked e2e): the guide's *Open With → Jupytext Notebook* on the lesson
source in the instructor lab, and a learner's session that edits lesson 06 and lets
JupyterLab's autosave write it (the checkout's ``git status`` stays empty).
"""

from __future__ import annotations

import http.cookiejar
import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import jupytext
import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
LESSON = "06_pull_loop_flow_control"


def _clone(tmp_path: Path) -> Path:
    clone = tmp_path / "checkout"
    subprocess.run(["git", "clone", "-q", "--shared", str(ROOT), str(clone)], check=True)
    assert _git_status(clone) == ""
    return clone


def _git_status(repo: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=all"],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip


class _Client:
    """A browser's side of the contents API: the ``_xsrf`` cookie a page load sets, echoed in
    the X-XSRFToken header of every request that changes something (as JupyterLab does)."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        self.opener.open(f"{base}/lab", timeout=30).read()

    def __call__(self, path: str, method: str = "GET", body: dict | None = None) -> dict:
        data = None if body is None else json.dumps(body).encode()
        xsrf = next((c.value for c in self.jar if c.name == "_xsrf"), "")
        req = urllib.request.Request(
            f"{self.base}{path}", data=data, method=method,
            headers={"Content-Type": "application/json", "X-XSRFToken": xsrf},
        )  # fmt: skip
        with self.opener.open(req, timeout=30) as resp:
            return json.loads(resp.read())


def _mqlab(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mqlab", *args], cwd=cwd, check=True,
                          capture_output=True, text=True)  # fmt: skip


def test_a_learners_saves_land_in_work_and_the_checkout_stays_clean(tmp_path, serve_folder):
    clone = _clone(tmp_path)
    out = _mqlab("lab", "prepare", cwd=clone).stdout
    assert out.startswith(f"working copy {clone / 'work'}: ")
    with serve_folder(clone / "work") as server:
        api = _Client(server.url)
        url = f"/api/contents/{LESSON}.ipynb"
        model = api(url + "?content=1&type=notebook")
        nb = model["content"]
        nb["cells"][0]["source"] = "LEARNER = 'ada'  # my edit\n" + nb["cells"][0]["source"]
        saved = api(url, "PUT", {"type": "notebook", "format": "json", "content": nb})
        assert saved["path"] == f"{LESSON}.ipynb"
        # autosave makes a checkpoint too (.ipynb_checkpoints/ inside work/)
        api(url + "/checkpoints", "POST")
    on_disk = json.loads((clone / "work" / f"{LESSON}.ipynb").read_text(encoding="utf-8"))
    assert "".join(on_disk["cells"][0]["source"]).startswith("LEARNER = 'ada'  # my edit\n")
    assert (clone / "work" / ".ipynb_checkpoints" / f"{LESSON}-checkpoint.ipynb").is_file()
    assert _git_status(clone) == ""
    # make reset-lesson L=06
    out = _mqlab("lab", "reset", "06", cwd=clone).stdout
    assert f"reset {clone / 'work' / (LESSON + '.ipynb')} (your copy is kept as " in out
    assert (clone / "work" / f"{LESSON}.ipynb").read_bytes() == (
        clone / "notebooks" / f"{LESSON}.ipynb"
    ).read_bytes()
    assert _git_status(clone) == ""


def test_the_instructor_lab_opens_a_lesson_source_as_a_notebook(tmp_path, serve_folder):
    clone = _clone(tmp_path)
    with serve_folder(clone) as server:
        api = _Client(server.url)
        listing = api("/api/contents/lessons?content=1")
        assert f"{LESSON}.md" in {c["name"] for c in listing["content"]}
        model = api(f"/api/contents/lessons/{LESSON}.md?content=1&type=notebook")
    assert model["type"] == "notebook", server.log_tail()
    cells = model["content"]["cells"]
    assert cells[0]["source"].startswith("# 06 · The consumer pull loop and flow control")
    code = [c["source"] for c in cells if c["cell_type"] == "code"]
    assert any("walk = L.walk_lab(SEED)" in s for s in code)
    assert _git_status(clone) == ""


#: Open a file with a named document factory, as the file browser's Open With menu does;
#: resolves to what the new widget shows.
OPEN_WITH_JS = """async ([path, factory]) => {
  const app = window.jupyterapp;
  await app.started; await app.restored;
  const factories = app.docRegistry.preferredWidgetFactories(path).map(f => f.name);
  const widget = await app.commands.execute('docmanager:open', {path: path, factory: factory});
  await widget.context.ready;
  const cells = widget.content.widgets;
  return {factories: factories, cells: cells.length,
          first: cells[0].model.sharedModel.getSource(),
          kinds: cells.map(c => c.model.type)};
}"""


@pytest.mark.e2e
def test_open_with_jupytext_notebook_in_the_instructor_lab(tmp_path, serve_folder, page):
    """The guide's workflow in Chromium: in ``make lab-instructor``'s lab, lesson 06's source
    offers the "Jupytext Notebook" factory and opens as a notebook of its cells."""
    clone = _clone(tmp_path)
    with serve_folder(clone) as server:
        page.goto(f"{server.url}/lab?reset", wait_until="domcontentloaded")
        page.wait_for_function("() => !!window.jupyterapp", timeout=60_000)
        got = page.evaluate(OPEN_WITH_JS, [f"lessons/{LESSON}.md", "Jupytext Notebook"])
    assert "Jupytext Notebook" in got["factories"], got["factories"]
    assert got["first"].startswith("# 06 · The consumer pull loop and flow control")
    want = jupytext.read(clone / "lessons" / f"{LESSON}.md")  # what the builder reads
    assert got["kinds"] == [c.cell_type for c in want.cells]
    assert _git_status(clone) == ""


#: Type into the first cell of the current notebook (as a learner's keystrokes would change
#: its model); the document turns dirty and autosave picks it up.
EDIT_FIRST_CELL_JS = """async ([text]) => {
  const app = window.jupyterapp;
  await app.started; await app.restored;
  const panel = app.shell.currentWidget;
  await panel.context.ready;
  const cell = panel.content.widgets[0].model.sharedModel;
  cell.setSource(text + cell.getSource());
  return panel.context.model.dirty;
}"""


@pytest.mark.e2e
def test_a_browser_session_that_edits_and_autosaves_leaves_the_checkout_clean(
    tmp_path, serve_folder, page
):
    """The issue's "done when", in Chromium: ``make lab``'s lab (work/ of a fresh clone),
    lesson 06 opened, its first cell edited, JupyterLab's autosave (set to every second)
    writes it: into work/, and ``git status`` of the clone stays empty."""
    clone = _clone(tmp_path)
    _mqlab("lab", "prepare", cwd=clone)
    autosave = {"@jupyterlab/docmanager-extension/plugin.jupyterlab-settings":
                {"autosave": True, "autosaveInterval": 1}}  # fmt: skip
    saved = clone / "work" / f"{LESSON}.ipynb"
    with serve_folder(clone / "work", settings=autosave) as server:
        page.goto(f"{server.url}/lab/tree/{LESSON}.ipynb?reset", wait_until="domcontentloaded")
        page.wait_for_function(
            f"() => window.jupyterapp?.shell?.currentWidget?.context?.path === '{LESSON}.ipynb'",
            timeout=60_000,
        )
        assert page.evaluate(EDIT_FIRST_CELL_JS, ["# ada was here\n"]) is True
        page.wait_for_function(
            "() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=30_000
        )
    first = json.loads(saved.read_text(encoding="utf-8"))["cells"][0]["source"]
    assert "".join(first).startswith("# ada was here\n")
    assert _git_status(clone) == ""


def test_make_lab_turns_news_and_update_checks_off(tmp_path, make_lab):
    """`make lab` itself (a fresh clone's, no user settings): the notification settings the page
    reads default to fetchNews "false" and checkForUpdates false, so JupyterLab never asks about
    its news in a toast over a lesson, and the server fetches neither news nor updates (issue 28)."""
    clone = _clone(tmp_path)
    with make_lab("lab", clone) as server:
        api = _Client(server.url)
        settings = api("/lab/api/settings/@jupyterlab/apputils-extension:notification")
        news, update = api("/lab/api/news"), api("/lab/api/update")
    assert server.root_dir == clone / "work" and (clone / "work" / f"{LESSON}.ipynb").is_file()
    # the page's composite setting: the schema's defaults (where the overrides land), then the
    # user's settings (none here)
    defaults = {k: v.get("default") for k, v in settings["schema"]["properties"].items()}
    composite = {**defaults, **settings["settings"]}
    assert (composite["fetchNews"], composite["checkForUpdates"]) == ("false", False)
    assert news == {"news": []}
    assert update == {"notification": None}
    assert _git_status(clone) == ""
