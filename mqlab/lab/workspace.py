"""The learners' working copy: ``make lab`` serves ``work/``, never the tracked ``notebooks/``.

JupyterLab autosaves every open notebook about every two minutes. Served straight from
``notebooks/``, a workshop wrote each learner's edits and outputs into the committed
lessons: ``tools/build_lessons.py --check`` then called them stale and the next ``git pull``
conflicted (issue 20, defects 8 and 9). So the lab is rooted at a git-ignored working copy:

* ``prepare`` copies every file of ``notebooks/`` (learner notebooks, ``solutions/``,
  ``mechanisms.md``, the guide) into ``work/`` when it is not there yet, keeping the folder
  layout, so relative links still resolve. A file already in ``work/`` is never
  overwritten: a restart, a ``git pull`` or a rebuild of the lessons leaves the learner's
  edits alone, and a lesson added upstream appears on the next start;
* ``reset_lesson("06")`` puts lesson 06's two notebooks (learner and solutions copy) back to
  what ``notebooks/`` holds now. A copy that differs is first moved to ``work/.reset/`` with a
  timestamp, so a reset by mistake loses nothing. It refuses (``LessonOpen``) while a running
  Jupyter server on this machine has a session for one of those notebooks: the open tab still
  holds the old copy, and its next save would write it back over the reset one (issue 28). The
  servers are those ``jupyter server list`` finds (``jpserver-*.json`` in Jupyter's runtime
  folder), each asked for its sessions (``GET /api/sessions`` with its token).

Command line (what ``make lab`` and ``make reset-lesson L=06`` run, from the checkout)::

    python -m mqlab lab prepare [--repo DIR] [--work DIR]
    python -m mqlab lab reset NN [--repo DIR] [--work DIR]

Mirrors no RocketMQ class: workshop plumbing. Owns: which files the working copy holds.
Must not know: what a lesson contains (``tools/build_lessons.py`` makes the notebooks).
"""

from __future__ import annotations

import argparse
import datetime as dt
import filecmp
import json
import re
import shutil
import sys
import urllib.error
import urllib.request
from pathlib import Path

__all__ = [
    "WORK_DIR",
    "BACKUP_DIR",
    "source_files",
    "prepare",
    "lesson_files",
    "LessonOpen",
    "open_in_lab",
    "reset_lesson",
    "main",
]

#: The working copy's folder, at the top of the checkout (``.gitignore`` lists it).
WORK_DIR = "work"
#: Where ``reset_lesson`` keeps the copies it replaces, inside the working copy.
BACKUP_DIR = ".reset"
_SKIP = {".ipynb_checkpoints", "__pycache__"}
#: How long to wait for a running server's list of sessions before calling it unreachable.
SESSIONS_TIMEOUT_S = 3.0


class LessonOpen(RuntimeError):
    """A reset was refused: a running lab has the lesson's notebook open (the message says which
    and what to do)."""


def _default_repo() -> Path:
    """The checkout: the current directory when it has ``notebooks/``, else mqlab's parent."""
    cwd = Path.cwd()
    if (cwd / "notebooks").is_dir():
        return cwd
    return Path(__file__).resolve().parents[2]


def source_files(repo: Path) -> list[Path]:
    """Every file under ``repo/notebooks`` (relative paths), checkpoints and caches left out."""
    src = Path(repo) / "notebooks"
    if not src.is_dir():
        raise FileNotFoundError(f"{src} is not a folder: run this from the mqlab checkout")
    return sorted(
        p.relative_to(src)
        for p in src.rglob("*")
        if p.is_file() and not _SKIP.intersection(p.relative_to(src).parts)
    )


def prepare(repo: Path | None = None, work: Path | None = None) -> list[Path]:
    """Copy each file of ``notebooks/`` that ``work/`` lacks; returns the paths created.

    Files already in ``work/`` are left exactly as they are, whatever ``notebooks/`` holds.
    """
    repo = Path(repo) if repo is not None else _default_repo()
    work = Path(work) if work is not None else repo / WORK_DIR
    created = []
    for rel in source_files(repo):
        dest = work / rel
        if dest.exists():
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(repo / "notebooks" / rel, dest)
        created.append(dest)
    return created


def lesson_files(repo: Path, lesson: str) -> list[Path]:
    """The notebooks of lesson ``lesson`` ("06", "6" or "06_pull_loop_flow_control"),
    relative to ``notebooks/``: the learner copy and its solutions copy."""
    m = re.fullmatch(r"(\d{1,2})(?:_[A-Za-z0-9_]+)?", lesson.strip())
    if m is None:
        raise ValueError(f"a lesson is a number such as 06 (or 06_name), got {lesson!r}")
    prefix = f"{int(m.group(1)):02d}_"
    files = [
        rel
        for rel in source_files(repo)
        if rel.suffix == ".ipynb" and rel.name.startswith(prefix)
        and (len(rel.parts) == 1 or rel.parts[0] == "solutions")
    ]  # fmt: skip
    if not files:
        known = sorted({r.name[:2] for r in source_files(repo) if r.suffix == ".ipynb"})
        raise ValueError(f"no lesson {prefix[:2]} in notebooks/; lessons: {', '.join(known)}")
    return files


def open_in_lab(
    paths: list[Path], runtime_dir: str | None = None
) -> tuple[list[tuple[Path, str]], list[str]]:
    """Which of ``paths`` a running Jupyter server on this machine has a session for (a notebook
    open in a tab, or its kernel still running): ``[(path, server url)]``, and the url and
    reason of each server that serves one of the paths' folders but could not be asked.

    ``runtime_dir``: where servers leave their ``jpserver-*.json`` (default: Jupyter's runtime
    folder, ``JUPYTER_RUNTIME_DIR``).
    """
    from jupyter_server.serverapp import list_running_servers  # heavy: only when resetting

    wanted = {Path(p).resolve(): Path(p) for p in paths}
    found: list[tuple[Path, str]] = []
    unasked: list[str] = []
    for info in list_running_servers(runtime_dir):
        root = Path(info.get("root_dir", "/")).resolve()
        if not any(root in p.parents for p in wanted):
            continue  # this server cannot open any of them
        url = info["url"] if info["url"].endswith("/") else info["url"] + "/"
        req = urllib.request.Request(f"{url}api/sessions")
        if info.get("token"):
            req.add_header("Authorization", f"token {info['token']}")
        try:
            with urllib.request.urlopen(req, timeout=SESSIONS_TIMEOUT_S) as resp:
                sessions = json.loads(resp.read())
        except (urllib.error.URLError, OSError, ValueError) as e:
            unasked.append(f"{url} ({getattr(e, 'reason', e)})")
            continue
        for s in sessions:
            path = (root / s.get("path", "")).resolve()
            if path in wanted:
                found.append((wanted[path], url))
    return found, unasked


def reset_lesson(lesson: str, repo: Path | None = None, work: Path | None = None,
                 *, now: dt.datetime | None = None,
                 runtime_dir: str | None = None) -> list[tuple[Path, Path | None]]:  # fmt: skip
    """Put lesson ``lesson``'s notebooks in ``work/`` back to ``notebooks/``'s.

    Returns ``(restored path, backup path or None)`` per notebook: a working copy that
    differs from the source is moved to ``work/.reset/<name>.<UTC time>.ipynb`` first.
    Raises ``LessonOpen``, changing nothing, while a running lab has one of them open
    (``runtime_dir``: see ``open_in_lab``); a server that cannot be asked is warned about on
    stderr.
    """
    repo = Path(repo) if repo is not None else _default_repo()
    work = Path(work) if work is not None else repo / WORK_DIR
    stamp = (now or dt.datetime.now(dt.UTC)).strftime("%Y%m%dT%H%M%SZ")
    files = lesson_files(repo, lesson)
    found, unasked = open_in_lab([work / rel for rel in files], runtime_dir)
    if found:
        where = "; ".join(f"{path} in the lab at {url}" for path, url in found)
        raise LessonOpen(
            f"lesson {files[0].name[:2]} is open: {where}. Close its tab first (File → Close "
            "and Shut Down Notebook, or shut its kernel down in the Running panel), then reset "
            "again: the open tab holds the old copy and its next save would undo the reset"
        )
    for server in unasked:
        print(f"mqlab lab: could not ask the Jupyter server at {server} whether lesson "
              f"{files[0].name[:2]} is open there; if it is, close its tab without saving "
              "(or choose Revert when the lab says the file changed)", file=sys.stderr)  # fmt: skip
    done = []
    for rel in files:
        src, dest = repo / "notebooks" / rel, work / rel
        backup = None
        if dest.exists() and not filecmp.cmp(src, dest, shallow=False):
            backup = work / BACKUP_DIR / rel.parent / f"{rel.stem}.{stamp}{rel.suffix}"
            backup.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(dest, backup)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest)
        done.append((dest, backup))
    return done


def main(argv: list[str] | None = None) -> int:
    """``python -m mqlab lab {prepare,reset NN}``."""
    ap = argparse.ArgumentParser(prog="python -m mqlab lab",
                                 description="the learners' working copy of notebooks/")  # fmt: skip
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name, text in (("prepare", "copy what work/ lacks from notebooks/ (never overwrites)"),
                       ("reset", "put one lesson's notebooks in work/ back to notebooks/'s")):  # fmt: skip
        p = sub.add_parser(name, help=text, description=text)
        if name == "reset":
            p.add_argument("lesson", help="the lesson's number, e.g. 06")
        p.add_argument("--repo", type=Path, default=None, help="the checkout (default: here)")
        p.add_argument("--work", type=Path, default=None, help=f"default: REPO/{WORK_DIR}")
    args = ap.parse_args(argv)
    repo = args.repo if args.repo is not None else _default_repo()
    work = args.work if args.work is not None else repo / WORK_DIR
    try:
        if args.cmd == "prepare":
            created = prepare(repo, work)
            print(f"working copy {work}: {len(created)} file(s) copied from notebooks/, "
                  f"{len(source_files(repo)) - len(created)} already there (left as they are)")  # fmt: skip
            return 0
        for dest, backup in reset_lesson(args.lesson, repo, work):
            kept = f" (your copy is kept as {backup})" if backup is not None else ""
            print(f"reset {dest}{kept}")
        return 0
    except LessonOpen as e:
        print(f"mqlab lab: {e}", file=sys.stderr)
        return 1
    except (FileNotFoundError, ValueError) as e:
        print(f"mqlab lab: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
