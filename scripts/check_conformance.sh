#!/usr/bin/env bash
# Say whether the conformance and interop tiers (tests/conformance, tests/interop) can run: they build
# conformance/java with Maven and run the real RocketMQ 4.9.3 broker, so they need a JDK 17 (java >= 17
# and javac) and `mvn`. mqlab/conformance/real_cluster.py#java_tools_missing makes the same check.
#
# Prints one "Conformance: ..." line and exits 0, except: with MQLAB_REQUIRE_CONFORMANCE=1 (CI) a
# missing tool is an error (exit 1). With MQLAB_SKIP_CONFORMANCE=1 the tiers are deselected and
# nothing is checked.
#
# Pure bash (builtins only apart from java, javac and mvn) so tests can run it with a PATH of fakes.
set -uo pipefail
shopt -s extglob

truthy() { case "${1:-}" in 1 | true | TRUE | True | yes | YES) return 0 ;; *) return 1 ;; esac; }

if truthy "${MQLAB_SKIP_CONFORMANCE:-}"; then
    echo "Conformance: MQLAB_SKIP_CONFORMANCE=1 -- tests/conformance and tests/interop are deselected."
    exit 0
fi

hint="install a JDK 17 and Maven (\`sudo apt-get install openjdk-17-jdk-headless maven\`;"
hint="$hint macOS: \`brew install openjdk@17 maven\`)"
missing=""
if ! MQLAB_SKIP_SPARK= "$BASH" "${BASH_SOURCE[0]%/*}/check_java.sh" >/dev/null 2>&1; then
    missing="Java >= 17"
fi
if [[ -n "${JAVA_HOME:-}" && -x "${JAVA_HOME%/}/bin/javac" ]] || command -v javac >/dev/null 2>&1; then
    :
else
    missing="${missing:+$missing, }javac (a JRE alone cannot build conformance/java)"
fi
mvn="$(command -v mvn)" || missing="${missing:+$missing, }mvn"

if [[ -n "$missing" ]]; then
    if truthy "${MQLAB_REQUIRE_CONFORMANCE:-}"; then
        echo "ERROR: MQLAB_REQUIRE_CONFORMANCE=1 but the conformance tier cannot run: no $missing." >&2
        echo "Fix: $hint; or MQLAB_SKIP_CONFORMANCE=1 to leave the tier out." >&2
        exit 1
    fi
    echo "Conformance: no $missing -- tests/conformance and tests/interop will be SKIPPED;" \
        "to run them $hint."
    exit 0
fi
version="$("$mvn" -B -v 2>/dev/null)"
version="${version%%$'\n'*}"
version="${version//$'\e'\[*([0-9;])m/}" # colour codes some Maven builds print even with -B
echo "Conformance: Maven at $mvn (${version:-unknown version}) and a JDK 17 -- ok" \
    "(the real RocketMQ 4.9.3 broker runs in tests/conformance; its first build downloads ~50 MB into ~/.m2)"
exit 0
