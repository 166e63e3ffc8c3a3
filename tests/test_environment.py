"""The repo's set-up stays coherent: environment.yml mirrors pyproject.toml, the README's quick start is
exactly two commands, CI runs the README's test command verbatim, and the Java check says what to do.

Mirrors no RocketMQ class: this guards the workbench's own plumbing (set-up issue; CONTRIBUTING.md §1).
Owns: consistency checks across pyproject.toml, environment.yml, README.md, .ci/run, Makefile and
scripts/check_java.sh. Must not know: anything about mqlab's packages.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
BASH = shutil.which("bash")


def _normalised(req: str) -> tuple[str, tuple[str, ...], str, str]:
    """Return (canonical name, sorted extras, sorted specifiers, marker) for one requirement string."""
    r = Requirement(req)
    specs = ",".join(sorted(str(s) for s in r.specifier))
    return (
        canonicalize_name(r.name),
        tuple(sorted(canonicalize_name(e) for e in r.extras)),
        specs,
        str(r.marker or ""),
    )


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _environment() -> dict:
    return yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))


def _conda_and_pip(env: dict) -> tuple[list[str], list[str]]:
    conda = [d for d in env["dependencies"] if isinstance(d, str)]
    pips = [d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d]
    assert len(pips) == 1, "environment.yml needs exactly one pip: section"
    return conda, [str(p) for p in pips[0]]


def _readme_first_code_block() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"^```[^\n]*\n(.*?)^```", text, flags=re.S | re.M)
    assert m is not None, "README.md has no fenced code block"
    return [ln.strip() for ln in m.group(1).splitlines()]


def _commands(lines: list[str]) -> list[str]:
    return [ln.strip() for ln in lines if ln.strip() and not ln.strip().startswith("#")]


def test_environment_yml_pip_section_equals_pyproject_dependencies_and_extras() -> None:
    """environment.yml's pip section = pyproject deps ∪ every extra (same specifiers) + `-e .`; §4.1."""
    project = _pyproject()["project"]
    wanted = list(project["dependencies"])
    for extra in sorted(project.get("optional-dependencies", {})):
        wanted += project["optional-dependencies"][extra]
    _, pip = _conda_and_pip(_environment())
    editable = [p for p in pip if p.startswith("-e")]
    listed = [p for p in pip if not p.startswith("-e")]
    assert editable == ["-e ."]
    assert len(listed) == len(set(map(_normalised, listed))), (
        "duplicate requirement in environment.yml"
    )
    have, want = set(map(_normalised, listed)), set(map(_normalised, wanted))
    assert have == want, (
        f"environment.yml lacks {sorted(want - have)}; has extra {sorted(have - want)}: "
        "edit its pip section to match pyproject.toml"
    )


def _third_party_imports(package: Path) -> set[str]:
    """The top-level modules a package's files import that are neither stdlib nor mqlab."""
    import ast
    import sys

    roots: set[str] = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                roots.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                roots.add(node.module.split(".")[0])
    return {r for r in roots if r not in sys.stdlib_module_names and r != "mqlab"}


def test_bench_and_explore_import_only_declared_distributions() -> None:
    """What ``mqlab.bench`` and ``mqlab.explore`` import is declared in pyproject.toml itself
    (psutil once arrived only through jupyterlab's dependencies)."""
    from importlib.metadata import packages_distributions

    project = _pyproject()["project"]
    declared = {_normalised(r)[0] for r in project["dependencies"]}
    for extra in project.get("optional-dependencies", {}).values():
        declared |= {_normalised(r)[0] for r in extra}
    dists = packages_distributions()
    for package in ("bench", "explore"):
        for module in sorted(_third_party_imports(ROOT / "mqlab" / package)):
            names = {canonicalize_name(d) for d in dists.get(module, [module])}
            assert names & declared, (
                f"mqlab/{package} imports {module}: declare it in pyproject.toml"
            )


def test_environment_yml_pins_python_311_openjdk_17_from_conda_forge() -> None:
    """environment.yml: name mqlab, channels [conda-forge, nodefaults], python=3.11, openjdk=17, pip."""
    env = _environment()
    conda, _ = _conda_and_pip(env)
    assert env["name"] == "mqlab"
    assert env["channels"] == ["conda-forge", "nodefaults"]
    assert "python=3.11" in conda
    assert "openjdk=17" in conda
    assert "pip" in conda


def test_readme_quick_start_is_exactly_two_commands() -> None:
    """README's first code block holds exactly two commands: the lab one and the test one (issue)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert text.index("## Quick start") < text.index("```")
    assert _commands(_readme_first_code_block()) == ["make lab", "make test"]


def test_ci_run_last_command_is_the_readme_test_command_verbatim() -> None:
    """.ci/run's last command appears verbatim in README's first code block, so CI runs the README."""
    ci_lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    last = _commands(ci_lines)[-1]
    assert last in _commands(_readme_first_code_block())
    assert last == "make test"


def test_ci_run_is_strict_bash() -> None:
    """.ci/run is bash with `set -euo pipefail`, so a failing step or test fails CI (issue)."""
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert lines[0] in ("#!/usr/bin/env bash", "#!/bin/bash")
    assert "set -euo pipefail" in _commands(lines)


def test_makefile_has_the_documented_targets_and_flags() -> None:
    """Makefile defines lab/test/doctor/clean/e2e-deps; lab binds 127.0.0.1; the test recipe's
    runner (tools/run_tests.py) gives nbmake a timeout of 180."""
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([A-Za-z][\w-]*):", text, flags=re.M))
    assert {"lab", "test", "doctor", "clean", "e2e-deps"} <= targets
    assert "--ip 127.0.0.1" in text
    assert "tools/run_tests.py" in text
    assert '"--nbmake-timeout=180"' in (ROOT / "tools" / "run_tests.py").read_text(encoding="utf-8")
    assert "SPARK_LOCAL_IP ?= 127.0.0.1" in text
    assert re.search(r"^test: check-java ", text, flags=re.M), (
        "Java must be checked before the install"
    )


def _run_check_java(
    tmp_path: Path, java_version_line: str | None, **env: str
) -> subprocess.CompletedProcess:
    """Run scripts/check_java.sh with PATH holding only a fake `java` printing the given line."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    if java_version_line is not None:
        fake = bindir / "java"
        fake.write_text(f"#!/bin/sh\necho '{java_version_line}' >&2\n", encoding="utf-8")
        fake.chmod(0o755)
    clean_env = {"PATH": str(bindir), "HOME": str(tmp_path), **env}
    return subprocess.run(
        [BASH, str(ROOT / "scripts" / "check_java.sh")],
        env=clean_env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


needs_bash = pytest.mark.skipif(BASH is None or os.name == "nt", reason="needs bash")

INSTALL_HINT = "Java 17 not found: install it with `sudo apt-get install openjdk-17-jre-headless`"


@needs_bash
@pytest.mark.parametrize(
    ("line", "major"),
    [('openjdk version "17.0.15" 2025-04-15', 17), ('openjdk version "21" 2023-09-19', 21)],
)
def test_check_java_accepts_java_17_and_newer(tmp_path: Path, line: str, major: int) -> None:
    """check_java.sh exits 0 for Java >= 17 (Spark 4 runs on Java 17/21; CONTRIBUTING.md §3)."""
    result = _run_check_java(tmp_path, line)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"Java: {major} at ")


@needs_bash
@pytest.mark.parametrize(
    ("line", "major"),
    [('openjdk version "11.0.2" 2019-01-15', 11), ('java version "1.8.0_292"', 8)],
)
def test_check_java_rejects_old_java_with_install_hint(
    tmp_path: Path, line: str, major: int
) -> None:
    """check_java.sh exits 1 for Java < 17 and prints the install hint (Spark 4 dropped 8/11; §3.1)."""
    result = _run_check_java(tmp_path, line)
    assert result.returncode == 1
    assert f"found Java {major} at " in result.stderr
    assert INSTALL_HINT in result.stderr


@needs_bash
def test_check_java_missing_java_says_how_to_install(tmp_path: Path) -> None:
    """With no java on PATH, check_java.sh exits 1 naming apt, brew and conda (issue: clear message)."""
    result = _run_check_java(tmp_path, None)
    assert result.returncode == 1
    assert "no 'java' on PATH" in result.stderr
    assert INSTALL_HINT in result.stderr
    assert "`brew install openjdk@17` (macOS)" in result.stderr
    assert "`conda env create -f environment.yml`" in result.stderr


@needs_bash
def test_check_java_missing_java_is_not_fatal_with_mqlab_skip_spark(tmp_path: Path) -> None:
    """MQLAB_SKIP_SPARK=1 turns a missing Java into a note and exit 0 (issue: run without Java)."""
    result = _run_check_java(tmp_path, None, MQLAB_SKIP_SPARK="1")
    assert result.returncode == 0
    assert "Spark tests are skipped" in result.stdout


@needs_bash
def test_check_java_prefers_java_home_like_pyspark(tmp_path: Path) -> None:
    """A JAVA_HOME without bin/java fails even if PATH has java: PySpark uses $JAVA_HOME (§3.6)."""
    result = _run_check_java(
        tmp_path, 'openjdk version "17.0.15"', JAVA_HOME=str(tmp_path / "nojdk")
    )
    assert result.returncode == 1
    assert "has no executable bin/java" in result.stderr


# -- the conformance tier's switches (tests/conformance, tests/interop) ---------------------------


def _run_check_conformance(
    tmp_path: Path, tools: tuple[str, ...], **env: str
) -> subprocess.CompletedProcess:
    """Run scripts/check_conformance.sh with PATH holding only fakes of the named tools."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    scripts = {
        "java": "echo 'openjdk version \"17.0.15\" 2025-04-15' >&2",
        "javac": "echo javac 17.0.15",
        "mvn": "printf 'Apache Maven 3.8.7\\nMaven home: /usr/share/maven\\n'",
    }
    for name in tools:
        fake = bindir / name
        fake.write_text(f"#!{BASH}\n{scripts[name]}\n", encoding="utf-8")
        fake.chmod(0o755)
    return subprocess.run(
        [BASH, str(ROOT / "scripts" / "check_conformance.sh")],
        env={"PATH": str(bindir), "HOME": str(tmp_path), **env},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


@needs_bash
def test_check_conformance_ok_with_jdk_and_maven(tmp_path: Path) -> None:
    """java 17 + javac + mvn: one "ok" line naming Maven's version, exit 0."""
    result = _run_check_conformance(tmp_path, ("java", "javac", "mvn"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(
        f"Conformance: Maven at {tmp_path}/bin/mvn (Apache Maven 3.8.7) and a JDK 17 -- ok"
    )


@needs_bash
def test_check_conformance_without_maven_says_the_tier_is_skipped(tmp_path: Path) -> None:
    """A JRE alone (no javac, no mvn): exit 0, saying both are missing and the tier is skipped."""
    result = _run_check_conformance(tmp_path, ("java",))
    assert result.returncode == 0
    assert "no javac (a JRE alone cannot build conformance/java), mvn" in result.stdout
    assert "will be SKIPPED" in result.stdout
    assert "openjdk-17-jdk-headless maven" in result.stdout


@needs_bash
def test_check_conformance_without_maven_fails_with_mqlab_require_conformance(
    tmp_path: Path,
) -> None:
    """MQLAB_REQUIRE_CONFORMANCE=1 (CI) turns a missing mvn into exit 1 with the reason."""
    result = _run_check_conformance(tmp_path, ("java", "javac"), MQLAB_REQUIRE_CONFORMANCE="1")
    assert result.returncode == 1
    assert "MQLAB_REQUIRE_CONFORMANCE=1 but the conformance tier cannot run: no mvn." in (
        result.stderr
    )


@needs_bash
def test_check_conformance_checks_nothing_with_mqlab_skip_conformance(tmp_path: Path) -> None:
    """MQLAB_SKIP_CONFORMANCE=1 wins over the require switch: the tiers are deselected, exit 0."""
    result = _run_check_conformance(
        tmp_path, (), MQLAB_SKIP_CONFORMANCE="1", MQLAB_REQUIRE_CONFORMANCE="1"
    )
    assert result.returncode == 0
    assert "tests/conformance and tests/interop are deselected" in result.stdout


MAKE = shutil.which("make")


@pytest.mark.skipif(MAKE is None, reason="needs make")
@pytest.mark.parametrize(
    ("switches", "mark"),
    [
        ({}, ""),
        ({"MQLAB_SKIP_SPARK": "1"}, '-m "not spark"'),
        ({"MQLAB_SKIP_CONFORMANCE": "1"}, '-m "not conformance and not interop"'),
        (
            {"MQLAB_SKIP_SPARK": "1", "MQLAB_SKIP_E2E": "yes", "MQLAB_SKIP_CONFORMANCE": "true"},
            '-m "not spark and not e2e and not conformance and not interop"',
        ),
    ],
)
def test_makefile_skip_switches_combine_into_one_mark_expression(
    switches: dict[str, str], mark: str
) -> None:
    """The MQLAB_SKIP_* switches deselect their markers, joined by "and" (make -p shows it)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MQLAB_SKIP_")}
    result = subprocess.run(
        [MAKE, "-s", "-p", "-n", "help"],
        cwd=ROOT,
        env={**env, **switches},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    lines = [ln for ln in result.stdout.splitlines() if ln.startswith("PYTEST_MARK := ")]
    assert [ln.rstrip() for ln in lines] == [f"PYTEST_MARK := {mark}".rstrip()]


def test_conformance_tier_is_wired_into_make_ci_and_pytest() -> None:
    """make test checks the tier first; CI installs a JDK and Maven and requires the tier; pytest
    knows the conformance and interop markers; Maven's target/ is ignored."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^test: check-java check-conformance ", makefile, flags=re.M)
    assert "export MQLAB_SKIP_CONFORMANCE MQLAB_REQUIRE_CONFORMANCE" in makefile
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "openjdk-17-jdk-headless" in ci and "maven" in ci
    assert 'export MQLAB_REQUIRE_CONFORMANCE="${MQLAB_REQUIRE_CONFORMANCE:-1}"' in ci
    markers = _pyproject()["tool"]["pytest"]["ini_options"]["markers"]
    assert {m.split(":")[0] for m in markers} >= {"conformance", "interop"}
    assert "conformance/java/target/" in (ROOT / ".gitignore").read_text(encoding="utf-8")


def _environment_yml_command() -> str:
    """The command environment.yml's header gives conda users (its `\\`-continued comment lines)."""
    lines = (ROOT / "environment.yml").read_text(encoding="utf-8").splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("#   conda env create"))
    parts = []
    for ln in lines[start:]:
        text = ln.removeprefix("#").strip()
        parts.append(text.removesuffix("\\").strip())
        if not text.endswith("\\"):
            break
    return " ".join(parts)


def test_environment_yml_gives_the_readmes_conda_command() -> None:
    """environment.yml's header and the README give conda users the same command, and it serves
    work/ (made by `python -m mqlab lab prepare`), never the tracked notebooks/ (issue 28)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"^With conda instead[^\n]*\n`(conda env create [^`]*)`", readme, flags=re.M)
    assert m is not None, "README.md: no conda command after 'With conda instead'"
    command = _environment_yml_command()
    assert command == m.group(1)
    steps = [s.strip() for s in command.split("&&")]
    assert steps[:3] == [
        "conda env create -f environment.yml",
        "conda activate mqlab",
        "python -m mqlab lab prepare",
    ]
    assert steps[3].startswith("jupyter lab --ip 127.0.0.1 ") and steps[3].endswith(" work/")
    assert "notebooks/" not in command
