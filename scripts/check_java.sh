#!/usr/bin/env bash
# Check that a Java runtime >= 17 is available for PySpark 4.x (Spark 4 dropped Java 8/11).
#
# Finds java the way PySpark does: $JAVA_HOME/bin/java when JAVA_HOME is set, else `java` on PATH.
# Exit 0 and print one "Java ... ok" line when it is >= 17; otherwise print how to install Java 17 and
# exit 1. With MQLAB_SKIP_SPARK=1 (or true/yes) a missing or old Java is reported but not fatal.
#
# Pure bash (builtins only apart from java itself) so tests can run it with a PATH holding a fake java.
set -uo pipefail

MIN_JAVA=17
skip="${MQLAB_SKIP_SPARK:-}"
case "$skip" in 1 | true | TRUE | True | yes | YES) skip=1 ;; *) skip="" ;; esac

install_hint() {
    echo "Java ${MIN_JAVA} not found: install it with \`sudo apt-get install openjdk-17-jre-headless\`" \
        "(Debian/Ubuntu), \`brew install openjdk@17\` (macOS) or use \`conda env create -f environment.yml\`."
    echo "Spark needs it. If Java 17 is installed elsewhere, point JAVA_HOME at it."
    echo "To run everything except the Spark tests without Java: MQLAB_SKIP_SPARK=1 make test"
}

fail() {
    # $1: what was found (one line)
    if [[ -n "$skip" ]]; then
        echo "Java: $1 -- MQLAB_SKIP_SPARK=1, so Spark tests are skipped."
        exit 0
    fi
    echo "ERROR: $1" >&2
    install_hint >&2
    exit 1
}

if [[ -n "${JAVA_HOME:-}" ]]; then
    java="${JAVA_HOME%/}/bin/java"
    [[ -x "$java" ]] || fail "JAVA_HOME=${JAVA_HOME} has no executable bin/java."
else
    java="$(command -v java)" || fail "no 'java' on PATH and JAVA_HOME is not set."
fi

out="$("$java" -version 2>&1)"
rc=$?
# `java -version` prints e.g.: openjdk version "17.0.15" 2025-04-15 | java version "1.8.0_292" | "21"
if [[ $rc -ne 0 || ! "$out" =~ version\ \"([0-9]+)(\.([0-9]+))? ]]; then
    first="${out%%$'\n'*}"
    fail "${java} -version did not report a version (exit ${rc}: ${first:-no output})."
fi
major="${BASH_REMATCH[1]}"
if [[ "$major" == 1 ]]; then
    major="${BASH_REMATCH[3]:-0}" # 1.8.0_292 -> 8
fi
first="${out%%$'\n'*}"
if ((major < MIN_JAVA)); then
    fail "found Java ${major} at ${java} (${first}), but Spark 4 needs Java ${MIN_JAVA} or newer."
fi
echo "Java: ${major} at ${java} (${first}) -- ok (Spark needs >= ${MIN_JAVA})"
exit 0
