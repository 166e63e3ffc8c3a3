"""``python -m mqlab <command>``: the command-line entry point.

Commands: ``bench`` (benchmarks that print figures; see ``mqlab.bench``), ``serve``
(a name server and brokers on real sockets for real RocketMQ clients; see ``mqlab.serve``),
``lab`` (the learners' working copy of the notebooks that ``make lab`` serves; see
``mqlab.lab.workspace``),
``experiment`` and ``conformance`` (the same requests to the real RocketMQ 4.9.3 broker
and to ``mqlab serve``, compared; see ``mqlab.conformance``), ``explore`` (every outcome
of a small scenario's schedules; see ``mqlab.explore``).
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m mqlab bench {broker,e2e,net,load,real,sweep,explore} [options]")
        print("       python -m mqlab serve [--host H] [--namesrv-port P] [--broker-port P] ...")
        print("                             [--slaves N] [--broker-role ROLE] [--broker-id N] ...")
        print("       python -m mqlab serve --dledger-peers PEERS [--dledger-self-id ID] ...")
        print("       python -m mqlab serve --dledger-nodes N [--dledger-port P] ...")
        print("       python -m mqlab serve --dledger-brokers N [--dledger-port P] ...")
        print(
            "       python -m mqlab experiment run SPEC.yaml --out DIR [--runner sequential|pool|spark]"
        )
        print("       python -m mqlab conformance [--report PATH] [--only GROUP] [-v] ...")
        print("       python -m mqlab interop [--only PREFIX] [--target mqlab|real] [--list]")
        print("       python -m mqlab lab {prepare,reset NN} [--repo DIR] [--work DIR]")
        print("       python -m mqlab explore SCENARIO [--bounds depth=N,faults=N] [--runner R]")
        return 0 if argv else 2
    cmd, rest = argv[0], argv[1:]
    if cmd == "bench":
        from mqlab.bench import main as bench_main

        return bench_main(rest)
    if cmd == "serve":
        from mqlab.serve import main as serve_main

        return serve_main(rest)
    if cmd == "experiment":
        from mqlab.experiments.cli import main as experiment_main

        return experiment_main(rest)
    if cmd == "conformance":
        from mqlab.conformance.cli import main as conformance_main

        return conformance_main(rest)
    if cmd == "interop":
        from mqlab.interop.matrix import main as interop_main

        return interop_main(rest)
    if cmd == "lab":
        from mqlab.lab.workspace import main as lab_main

        return lab_main(rest)
    if cmd == "explore":
        from mqlab.explore.cli import main as explore_main

        return explore_main(rest)
    print(
        f"mqlab: unknown command {cmd!r} "
        "(known: bench, serve, experiment, conformance, interop, lab, explore)",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    sys.exit(main())
