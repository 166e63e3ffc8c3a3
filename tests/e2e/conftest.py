"""Fixtures for the browser tier: a private JupyterLab server on 127.0.0.1 and Debian's Chromium
driven by Playwright (Python), as recorded reliable in CONTRIBUTING.md §4.

Mirrors no RocketMQ class: this is the workbench's own plumbing (issue 4, "Tests", real browser).
Owns: finding Chromium, starting/stopping `jupyter lab` with private JUPYTER_* directories (also
as a clone's own `make lab` / `make lab-instructor`: `make_lab`), the browser and page fixtures,
and the run-all-through-the-app-object helper. Must not know: what a
lesson or the control panel contains (the tests say that).

Everything here is bounded in time and cleaned up: the server runs in its own process group and is
terminated (then killed) at teardown; kernels it started are found by the private runtime dir in
their command line and ended by PID; Playwright closes the browser it launched. Nothing is written
outside pytest's tmp dir except the screenshots under artifacts/e2e/ (gitignored).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:  # playwright may be absent: then the tests skip before these are used
    from playwright.sync_api import Browser, Page

# pytest --nbmake must never collect a notebook that a browser test keeps next to itself.
collect_ignore_glob = ["*.ipynb"]

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts" / "e2e"

#: Where Debian's `chromium` package puts the browser: the real binary first (skips the wrapper
#: script and its harmless /etc/chromium.d noise), then the wrapper. MQLAB_E2E_CHROMIUM overrides.
CHROMIUM_CANDIDATES = ("/usr/lib/chromium/chromium", "/usr/bin/chromium")
INSTALL_HINT = (
    "install Debian's Chromium (`sudo apt-get install chromium`; `make test` does it when run as "
    "root) or point MQLAB_E2E_CHROMIUM at a Chromium/Chrome binary"
)

#: Launch flags (CONTRIBUTING.md §4): no sandbox as root, and no background
#: networking, since this machine's closed network refuses Chromium's update/sync connections.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
]

SERVER_START_TIMEOUT_S = 60.0
SERVER_STOP_TIMEOUT_S = 15.0

#: User settings for the private server: no news/update toast over the screenshot (fetchNews
#: "false" is what stopped it, CONTRIBUTING.md §4), no toasts at all, no autosave, no windowing.
USER_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
        "doNotDisturbMode": True,
    },
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    # every cell attached and rendered, so a panel far down a long lesson is in the DOM
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}

#: Run All through the application object (needs --LabApp.expose_app_in_browser=True), after the
#: kernel has answered kernel_info: 20/20 green where menu clicks dropped 2 of 8 (CONTRIBUTING.md §4).
#: Resolves to {ok: runAll's boolean (false when a cell raised), readyMs: until kernel_info, runMs:
#: the run itself}; rejects when `timeoutMs` passes.
RUN_ALL_WHEN_READY = """async ([timeoutMs]) => {
  const deadline = new Promise((_, reject) => setTimeout(
      () => reject(new Error(`run-all did not finish within ${timeoutMs} ms`)), timeoutMs));
  const run = (async () => {
    const t0 = performance.now();
    const app = window.jupyterapp;
    await app.started; await app.restored;
    const panel = app.shell.currentWidget;
    await panel.context.ready; await panel.sessionContext.ready;
    await panel.sessionContext.session.kernel.info;
    const t1 = performance.now();
    const ok = await app.commands.execute('notebook:run-all-cells');
    return {ok: ok, readyMs: t1 - t0, runMs: performance.now() - t1};
  })();
  return await Promise.race([run, deadline]);
}"""


def find_chromium() -> str | None:
    """Return the Chromium binary to drive, or None when there is none."""
    override = os.environ.get("MQLAB_E2E_CHROMIUM")
    if override:
        return override if os.access(override, os.X_OK) else None
    for path in CHROMIUM_CANDIDATES:
        if os.access(path, os.X_OK):
            return path
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pids_with_in_cmdline(needle: str) -> list[int]:
    """PIDs (not ours) whose command line mentions `needle` (Linux /proc; [] elsewhere)."""
    pids = []
    proc = Path("/proc")
    if not proc.is_dir():
        return pids
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if needle in cmdline:
            pids.append(int(entry.name))
    return sorted(pids)


@dataclass(slots=True, frozen=True)
class JupyterServer:
    """A running private JupyterLab: its base URL, served directory and log file."""

    url: str
    root_dir: Path
    log_path: Path

    def log_tail(self, n: int = 40) -> str:
        """The last `n` lines the server logged (for failure messages)."""
        try:
            lines = self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return "(no server log)"
        return "\n".join(lines[-n:])


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """Path of the Chromium binary; skips the test when there is none or Playwright is absent."""
    path = find_chromium()
    if path is None:
        where = os.environ.get("MQLAB_E2E_CHROMIUM") or " or ".join(CHROMIUM_CANDIDATES)
        pytest.skip(f"no executable Chromium at {where}: {INSTALL_HINT}")
    pytest.importorskip(
        "playwright.sync_api",
        reason="playwright (Python) is not installed: pip install -e '.[dev]'",
    )
    return path


@pytest.fixture
def jupyter_server(tmp_path: Path, chromium_path: str) -> Iterator[JupyterServer]:
    """Start `jupyter lab` on 127.0.0.1:<free port> over tmp_path/root with private JUPYTER_* dirs.

    Tests copy the notebooks they open into `root_dir`, so nothing the browser does (trust
    database, checkpoints, a stray save) touches the repository's notebooks. Depends on
    `chromium_path` only so that a missing browser skips before a server is started.
    """
    yield from _serve(tmp_path)


@pytest.fixture(scope="module")
def module_jupyter_server(
    tmp_path_factory: pytest.TempPathFactory, chromium_path: str
) -> Iterator[JupyterServer]:
    """One server for all the tests of a module (each lesson opens its own notebook and kernel
    in it; starting a server per test cost 2–5 s each)."""
    yield from _serve(tmp_path_factory.mktemp("lab"))


@pytest.fixture
def serve_folder(tmp_path: Path) -> Callable[[Path], contextlib.AbstractContextManager]:
    """``with serve_folder(root) as server:`` a private JupyterLab (as ``jupyter_server``, the
    flags ``make lab`` passes) rooted at an existing folder, stopped when the block ends.
    Needs no browser. ``settings``: user settings that replace ``USER_SETTINGS``' entries
    (e.g. autosave on, every second)."""
    n = itertools.count()

    @contextlib.contextmanager
    def serve(root: Path, settings: dict | None = None) -> Iterator[JupyterServer]:
        own = tmp_path / f"server-{next(n)}"
        own.mkdir()
        gen = _serve(own, root=root, settings=settings)
        try:
            yield next(gen)
        finally:
            gen.close()

    return serve


def _serve(
    tmp_path: Path, root: Path | None = None, settings: dict | None = None
) -> Iterator[JupyterServer]:
    """The body of the server fixtures: start, wait for /api/status, yield, stop.

    ``root``: the folder to serve (default: a new ``tmp_path/root``); the server's own
    config, data and runtime folders are always private ones under ``tmp_path``.
    """
    if root is None:
        root = tmp_path / "root"
        root.mkdir()
    env, settings_dir, _ = _private_env(tmp_path)
    config = tmp_path / "jconfig"
    _write_settings(settings_dir, {**USER_SETTINGS, **(settings or {})})
    port = _free_port()
    cmd = [
        sys.executable, "-m", "jupyterlab", "--no-browser",
        "--ip", "127.0.0.1", "--port", str(port), "--ServerApp.port_retries=0",
        f"--ServerApp.root_dir={root}",
        "--IdentityProvider.token=", "--ServerApp.password=",
        "--LabApp.expose_app_in_browser=True",
        # as `make lab`: notebooks open unmodified (mqlab/lab/contents.py)
        "--ServerApp.contents_manager_class=mqlab.lab.contents.LessonContentsManager",
        f"--LabApp.user_settings_dir={settings_dir}",
        f"--LabApp.workspaces_dir={config / 'lab' / 'workspaces'}",
    ]  # fmt: skip
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")  # as root jupyter exits at once without it (§5.1)
    yield from _run_server(cmd, root, env, tmp_path, port)


def _private_env(tmp_path: Path) -> tuple[dict[str, str], Path, Path]:
    """The environment of a private server: its own JUPYTER_CONFIG_DIR, DATA_DIR, RUNTIME_DIR and
    IPYTHONDIR under ``tmp_path`` (made here; JUPYTER_CONFIG_PATH unset). Returns the
    environment, the user-settings folder (empty) and the runtime folder."""
    config, data, runtime = tmp_path / "jconfig", tmp_path / "jdata", tmp_path / "jruntime"
    for d in (config, data, runtime):
        d.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("JUPYTER_CONFIG_PATH", "MAKEFLAGS")}
    env.update({
        "JUPYTER_CONFIG_DIR": str(config),
        "JUPYTER_DATA_DIR": str(data),
        "JUPYTER_RUNTIME_DIR": str(runtime),
        "IPYTHONDIR": str(tmp_path / "ipython"),
        "PYTHONUNBUFFERED": "1",
    })  # fmt: skip
    return env, config / "lab" / "user-settings", runtime


def _write_settings(settings_dir: Path, settings: dict) -> None:
    for rel, value in settings.items():
        target = settings_dir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(value), encoding="utf-8")


@pytest.fixture
def make_lab(tmp_path: Path) -> Callable[..., contextlib.AbstractContextManager]:
    """``with make_lab(target, checkout, settings) as server:`` runs the checkout's own ``make
    lab`` or ``make lab-instructor``, unchanged, on a free port: what a learner or an instructor
    starts. ``VENV`` is a folder whose ``bin/python`` and ``bin/jupyter`` run this interpreter
    (``STAMP=``: no install); ``LAB_ARGS`` adds only what a test needs (no browser, no token,
    the app object exposed, private settings and workspaces folders) and the JUPYTER_* folders
    are private. ``settings``: the only user settings (default none, so the lab's own defaults
    show). Stopped, with its kernels, when the block ends. Needs no browser (skips without make)."""
    if shutil.which("make") is None:
        pytest.skip("no `make` on PATH: the test runs the Makefile's own lab targets")
    n = itertools.count()
    venv = tmp_path / "fake-venv"
    (venv / "bin").mkdir(parents=True)
    scripts = {  # `jupyter lab ARGS` → `python -m jupyterlab ARGS`
        "python": f'exec "{sys.executable}" "$@"',
        "jupyter": f'[ "$1" = lab ] || exit 2\nshift\nexec "{sys.executable}" -m jupyterlab "$@"',
    }
    for name, body in scripts.items():
        script = venv / "bin" / name
        script.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
        script.chmod(0o755)

    @contextlib.contextmanager
    def run(target: str, checkout: Path, settings: dict | None = None) -> Iterator[JupyterServer]:
        own = tmp_path / f"make-{next(n)}"
        own.mkdir()
        env, settings_dir, _ = _private_env(own)
        _write_settings(settings_dir, settings or {})
        port = _free_port()
        lab_args = (
            "--no-browser --ServerApp.port_retries=0 --IdentityProvider.token= "
            "--ServerApp.password= --LabApp.expose_app_in_browser=True "
            f"--LabApp.user_settings_dir={settings_dir} "
            f"--LabApp.workspaces_dir={own / 'jconfig' / 'lab' / 'workspaces'}"
        )
        cmd = ["make", "--no-print-directory", "-C", str(checkout), target, "STAMP=",
               f"VENV={venv}", f"PORT={port}", f"LAB_ARGS={lab_args}"]  # fmt: skip
        root = checkout / "work" if target == "lab" else checkout
        gen = _run_server(cmd, checkout, env, own, port, root=root)
        try:
            yield next(gen)
        finally:
            gen.close()

    return run


def _run_server(
    cmd: list[str],
    cwd: Path,
    env: dict[str, str],
    tmp_path: Path,
    port: int,
    root: Path | None = None,
) -> Iterator[JupyterServer]:
    """Start ``cmd`` (a JupyterLab on 127.0.0.1:``port``) in its own process group, wait for
    /api/status, yield, stop it and its kernels. ``root``: the folder it serves (default ``cwd``)."""
    runtime = Path(env["JUPYTER_RUNTIME_DIR"])
    root = cwd if root is None else root
    log_path = tmp_path / "jupyter.log"
    url = f"http://127.0.0.1:{port}"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            cmd, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    server = JupyterServer(url=url, root_dir=root, log_path=log_path)
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"{cmd[0]} exited with {proc.returncode}:\n{server.log_tail()}")
            try:
                with urllib.request.urlopen(f"{url}/api/status", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                pytest.fail(
                    f"jupyter lab did not answer /api/status within {SERVER_START_TIMEOUT_S} s:\n"
                    f"{server.log_tail()}"
                )
            time.sleep(0.2)
        yield server
    finally:
        _stop_server(proc, runtime)


def _stop_server(proc: subprocess.Popen, runtime: Path) -> None:
    """SIGTERM the server's process group (it shuts its kernels down), SIGKILL after a bound,
    then end any kernel still running from our private runtime dir, by PID."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=SERVER_STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(timeout=SERVER_STOP_TIMEOUT_S)
    # Kernels run in their own session (jupyter_client starts them so); their connection file
    # lives in our private runtime dir, so its path picks out exactly the kernels we started.
    for pid in _pids_with_in_cmdline(str(runtime)):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.fixture
def browser(chromium_path: str) -> Iterator[Browser]:
    """A headless Chromium launched by Playwright from `chromium_path` (never a downloaded one)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS, timeout=30_000)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser: Browser, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A 1400x2400 page (tall, so a whole panel fits in one element screenshot), 20 s default
    timeouts; when the test failed, a screenshot of the window goes to artifacts/e2e/."""
    context = browser.new_context(viewport={"width": 1400, "height": 2400})
    pg = context.new_page()
    pg.set_default_timeout(20_000)
    try:
        yield pg
    finally:
        report = getattr(request.node, "rep_call", None)
        if report is not None and report.failed:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            try:
                pg.screenshot(path=str(ARTIFACTS / f"{request.node.name}-failure.png"))
            except Exception:  # a failed screenshot must not mask the test's own failure
                pass
        context.close()


@pytest.fixture(scope="module")
def module_page(chromium_path: str) -> Iterator[Page]:
    """One Chromium page for all the tests of a module (with `module_jupyter_server`): the next
    notebook opens inside the JupyterLab already loaded, which saves loading the lab again."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS, timeout=30_000)
        try:
            context = b.new_context(viewport={"width": 1400, "height": 2400})
            pg = context.new_page()
            pg.set_default_timeout(20_000)
            yield pg
        finally:
            b.close()


#: Close every document in the lab (discarding changes) and open `path`; resolves when the
#: notebook is the current widget.
OPEN_IN_LAB = """async ([path]) => {
  const app = window.jupyterapp;
  await app.started; await app.restored;
  await app.serviceManager.sessions.shutdownAll();
  for (const w of Array.from(app.shell.widgets('main'))) {
    if (w.context) { w.context.model.dirty = false; }
    w.dispose();
  }
  await app.commands.execute('docmanager:open', {path: path});
}"""


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    """Keep each phase's report on the item so `page` can tell a failed test at teardown."""
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


@pytest.fixture
def run_all_in_lab(jupyter_server: JupyterServer, page: Page) -> Callable[..., dict[str, float]]:
    """Return `run_all(notebook, timeout_ms) -> timings`: copy the notebook into the server's root,
    open it in `page`, wait for its kernel, Run All through the app object, and fail (naming the
    first traceback and the server log) unless every cell ran without an error. The timings (s)
    are `open` (page until the notebook widget exists), `kernel` (until kernel_info) and `run`."""

    def run_all(notebook: Path, timeout_ms: int = 120_000) -> dict[str, float]:
        return run_all_on(jupyter_server, page, notebook, timeout_ms)

    return run_all


@pytest.fixture
def run_all_in_module_lab(
    module_jupyter_server: JupyterServer, module_page: Page
) -> Callable[..., dict[str, float]]:
    """``run_all_in_lab`` on the module's shared server and page."""

    def run_all(notebook: Path, timeout_ms: int = 120_000) -> dict[str, float]:
        return run_all_on(module_jupyter_server, module_page, notebook, timeout_ms)

    return run_all


def run_all_on(
    jupyter_server: JupyterServer, page: Page, notebook: Path, timeout_ms: int = 120_000
) -> dict[str, float]:
    """``run_all_in_lab``'s work on a given server and page (for module-scoped servers)."""
    t0 = time.monotonic()
    shutil.copy2(notebook, jupyter_server.root_dir / notebook.name)
    in_lab = page.url.startswith(jupyter_server.url) and page.evaluate("() => !!window.jupyterapp")
    if in_lab:  # the lab is loaded already (a module's shared page): open the notebook in it
        page.evaluate(OPEN_IN_LAB, [notebook.name])
    else:  # ?reset: a fresh workspace, so the lab does not reopen an earlier test's notebook
        page.goto(
            f"{jupyter_server.url}/lab/tree/{notebook.name}?reset", wait_until="domcontentloaded"
        )
    page.wait_for_function(
        """([name]) => {
             const w = window.jupyterapp?.shell?.currentWidget;
             return w?.sessionContext !== undefined && w?.context?.path === name;
           }""",
        arg=[notebook.name],
        timeout=60_000,
    )
    t_open = time.monotonic() - t0
    result = page.evaluate(RUN_ALL_WHEN_READY, [timeout_ms])
    if result["ok"] is not True:
        errors = page.locator(
            ".jp-RenderedText[data-mime-type='application/vnd.jupyter.error']"
        ).all_inner_texts()
        pytest.fail(
            f"Run All of {notebook.name} stopped at a failing cell:\n"
            f"{errors[0] if errors else '(no traceback shown)'}\n"
            f"server log:\n{jupyter_server.log_tail()}"
        )
    return {
        "open": t_open,
        "kernel": result["readyMs"] / 1000,
        "run": result["runMs"] / 1000,
    }
