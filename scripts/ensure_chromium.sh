#!/usr/bin/env bash
# Make sure the browser tier (tests/e2e: JupyterLab driven by Playwright) has a Chromium to drive.
#
# The tests use Debian's `chromium` package (/usr/lib/chromium/chromium, /usr/bin/chromium), never a
# browser that Playwright downloads itself (`playwright install` fails on closed networks and is not
# needed). This script:
#   - finds Chromium (MQLAB_E2E_CHROMIUM, else the Debian paths) and prints where it is;
#   - when none is found, we are root, apt-get exists and the `chromium` package is not installed,
#     installs it (`apt-get update` once, then `apt-get install -y --no-install-recommends chromium`);
#     it never upgrades or reinstalls anything already installed;
#   - otherwise prints that the e2e tests will be skipped and how to install Chromium.
# It always exits 0: a missing browser skips the e2e tests (with a reason), it does not fail `make test`.
#
#   --check           report only, never install (make doctor)
#   MQLAB_SKIP_E2E=1  do nothing (make test then deselects the e2e tests)
set -uo pipefail

CANDIDATES=(/usr/lib/chromium/chromium /usr/bin/chromium)
HINT="To run them: \`sudo apt-get install chromium\` (Debian; \`make test\` does it when run as root),
or point MQLAB_E2E_CHROMIUM at a Chromium/Chrome binary."

check_only=""
[[ "${1:-}" == "--check" ]] && check_only=1

case "${MQLAB_SKIP_E2E:-}" in
1 | true | TRUE | True | yes | YES)
    echo "e2e: MQLAB_SKIP_E2E=1: browser tests deselected, Chromium not checked."
    exit 0
    ;;
esac

found() {
    # $1: the binary
    local version
    version="$("$1" --version 2>/dev/null | head -n 1)"
    version="${version%"${version##*[![:space:]]}"}" # Chromium ends the line with a space
    echo "e2e: Chromium at $1 (${version:-version unknown}) -- browser tests will run"
    exit 0
}

skipped() {
    # $1: why
    echo "e2e: $1 The browser tests (tests/e2e) will be SKIPPED."
    echo "$HINT"
    exit 0
}

if [[ -n "${MQLAB_E2E_CHROMIUM:-}" ]]; then
    [[ -x "$MQLAB_E2E_CHROMIUM" ]] && found "$MQLAB_E2E_CHROMIUM"
    skipped "MQLAB_E2E_CHROMIUM=$MQLAB_E2E_CHROMIUM is not an executable file."
fi
for c in "${CANDIDATES[@]}"; do
    [[ -x "$c" ]] && found "$c"
done

[[ -n "$check_only" ]] && skipped "no Chromium at ${CANDIDATES[*]}."
if dpkg-query -W -f='${Status}' chromium 2>/dev/null | grep -q 'ok installed'; then
    skipped "the chromium package is installed but ${CANDIDATES[*]} are missing (not reinstalling)."
fi
if [[ "$(id -u)" != 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
    skipped "no Chromium at ${CANDIDATES[*]} (and not root with apt-get, so not installing it)."
fi

echo "e2e: no Chromium found; installing Debian's chromium with apt-get (about 300 MB, ~30-70 s)"
if ! { apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; }; then
    skipped "WARNING: apt-get install chromium failed."
fi
for c in "${CANDIDATES[@]}"; do
    [[ -x "$c" ]] && found "$c"
done
skipped "apt-get installed chromium but ${CANDIDATES[*]} are still missing."
