"""The push-consumer harness tells the C++ client's known shutdown abort from other exits.

A stand-in process plays the client: it says "started", then at the stop file says
"shutting_down" and exits as told (no client library needed).
"""

import json
import subprocess
import sys

import pytest
from cpp_harness import SHUTDOWN_ABORT, PushConsumerProc, shutdown_abort

STAND_IN = """
import json, os, sys, time
out, stop, how, message = sys.argv[1:]
print(json.dumps({"started": True}), flush=True)
with open(out, "a") as f:
    f.write(json.dumps({"body": "m0"}) + "\\n")
while not os.path.exists(stop):
    time.sleep(0.01)
if how != "abort-before":
    print(json.dumps({"shutting_down": True}), flush=True)
if how == "ok":
    print(json.dumps({"stopped": True}), flush=True)
    os._exit(0)
sys.stderr.write(message + "\\n")
sys.stderr.flush()
os.abort()
"""


def stand_in(tmp_path, how: str) -> PushConsumerProc:
    p = PushConsumerProc.__new__(PushConsumerProc)
    p.name, p.shutdown_aborted = how, False
    p.out, p.stop_file = tmp_path / f"{how}.jsonl", tmp_path / f"{how}.stop"
    p.proc = subprocess.Popen(
        [sys.executable, "-c", STAND_IN, str(p.out), str(p.stop_file), how,
         SHUTDOWN_ABORT],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert json.loads(p.proc.stdout.readline()) == {"started": True}
    return p


def test_an_abort_in_shutdown_is_a_warning_and_the_records_come_back(tmp_path):
    p = stand_in(tmp_path, "abort")
    with pytest.warns(UserWarning, match="aborted in shutdown"):
        assert p.stop(10) == [{"body": "m0"}]
    assert p.shutdown_aborted


def test_a_clean_exit_returns_the_records_without_a_warning(tmp_path, recwarn):
    p = stand_in(tmp_path, "ok")
    assert p.stop(10) == [{"body": "m0"}]
    assert not p.shutdown_aborted and len(recwarn) == 0


@pytest.mark.parametrize("how, clean", [("abort", True), ("abort-before", False)])
def test_an_abort_fails_when_shutdown_matters_or_had_not_begun(tmp_path, how, clean):
    p = stand_in(tmp_path, how)
    with pytest.raises(pytest.fail.Exception, match="exited -6"):
        p.stop(10, clean=clean)


def test_shutdown_abort_wants_sigabrt_the_marker_and_the_message_last():
    out, err = '{"shutting_down": true}\n', f"Traceback ...\n{SHUTDOWN_ABORT}\n"
    assert shutdown_abort(-6, out, err)
    assert not shutdown_abort(-11, out, err)  # a segfault is not this
    assert not shutdown_abort(1, out, err)
    assert not shutdown_abort(-6, "", err)  # shutdown had not begun
    assert not shutdown_abort(-6, out, err + "something after\n")
    assert not shutdown_abort(-6, out, "terminate called after throwing std::bad_alloc\n")
