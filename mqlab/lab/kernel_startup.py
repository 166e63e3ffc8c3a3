"""What a kernel of ``make lab`` runs before any cell: the NameError hint.

``make lab`` and ``make lab-instructor`` set ``PYTHONSTARTUP`` to this file, and IPython runs it
when a kernel starts (``InteractiveShellApp.exec_PYTHONSTARTUP``). It installs the hint of
``mqlab/lab/name_error_hint.py``, so that a lesson cell run before the lesson's first cell (a
kernel restart, then a click on a later cell) says to run the notebook from the top, not only a
cell run after ``import mqlab.lab`` (issue 28).

It runs in the notebook's own namespace, so it leaves no name there; it loads that one file by
its path, without mqlab's packages (a kernel starts as fast as before); and a plain ``python``
started in the lab's terminal, which also reads PYTHONSTARTUP, is left alone. Mirrors no
RocketMQ class.
"""


def _mqlab_kernel_startup() -> None:
    import importlib.util
    import os

    try:
        from IPython import get_ipython
    except ImportError:
        return
    if get_ipython() is None:  # not IPython: a plain interpreter
        return
    here = os.path.dirname(os.path.abspath(os.environ.get("PYTHONSTARTUP") or __file__))
    spec = importlib.util.spec_from_file_location(
        "_mqlab_name_error_hint", os.path.join(here, "name_error_hint.py")
    )
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.install_name_error_hint()


try:
    _mqlab_kernel_startup()
finally:
    del _mqlab_kernel_startup
