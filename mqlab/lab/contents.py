"""The lab's contents manager: a lesson opens unmodified.

When JupyterLab starts a notebook's kernel it writes that kernel's ``kernelspec`` and
``language_info`` into the notebook's metadata. If they differ from what the file holds, the
notebook turns modified ("●") before the learner touches it. A committed lesson cannot hold the
learner's values: ``language_info.version`` is the Python patch version of whatever environment
runs it (``3.11.7`` here, something else elsewhere) and the kernelspec's display name comes from
the installed ipykernel. So ``make lab`` serves notebooks through ``LessonContentsManager``, which
fills both in with exactly what the lab's own Python kernel will report; JupyterLab's write then
changes nothing and the notebook stays clean. Files on disk are not touched until the learner saves.

A lesson *source* (``lessons/NN_name.md``, opened in ``make lab-instructor`` with *Open With →
Jupytext Notebook*) is a notebook too, read and written by jupytext, and is served filled in the
same way. Saving it must not write those machine facts into the tracked file: jupytext writes the
``kernelspec`` into the front matter (``display_name`` is the installed ipykernel's) and takes the
code-cell language from ``language_info.pygments_lexer`` (every ```` ```{code-cell} ```` would
become ```` ```{code-cell} ipython3 ````). So a notebook saved to a text file gets back the
``kernelspec`` and ``language_info`` that file holds (when it names the same kernel), and saving an
unchanged source writes the same bytes (issue 28). The class is jupytext's contents manager over
jupyter_server's, so jupytext's server extension keeps it as it is instead of wrapping it.

Mirrors no RocketMQ class: this is the workbench's JupyterLab plumbing (issue 13, defect 9).
Owns: the metadata a served notebook carries. Must not know: what a lesson contains.

.. code-block:: shell

    jupyter lab --ServerApp.contents_manager_class=mqlab.lab.contents.LessonContentsManager
"""

from __future__ import annotations

import sys
from typing import Any

from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
from jupytext.async_contentsmanager import build_async_jupytext_contents_manager_class
from tornado.web import HTTPError

__all__ = [
    "LessonContentsManager",
    "kernel_language_info",
    "fill_kernel_metadata",
    "keep_file_kernel_metadata",
]

#: The metadata a kernel writes into a notebook when it starts (see ``fill_kernel_metadata``).
KERNEL_KEYS = ("kernelspec", "language_info")

#: Kernel command names that jupyter_client replaces with the server's own interpreter, so the
#: kernel runs the same Python as this process (jupyter_client KernelManager.format_kernel_cmd).
_SAME_PYTHON = {
    "python",
    f"python{sys.version_info[0]}",
    f"python{sys.version_info[0]}.{sys.version_info[1]}",
}


def kernel_language_info() -> dict[str, Any]:
    """The ``language_info`` ipykernel reports from this interpreter (IPythonKernel.language_info)."""
    return {
        "name": "python",
        "version": sys.version.split()[0],
        "mimetype": "text/x-python",
        "codemirror_mode": {"name": "ipython", "version": sys.version_info[0]},
        "pygments_lexer": "ipython3",
        "nbconvert_exporter": "python",
        "file_extension": ".py",
    }


def fill_kernel_metadata(metadata: dict[str, Any], spec: Any | None, kernel_name: str) -> bool:
    """Set ``metadata``'s kernelspec and language_info to what JupyterLab will write for the
    kernel ``kernel_name`` (``spec``: its KernelSpec, or None when unknown). Returns whether the
    notebook is one this applies to: its kernelspec names that kernel and the kernel runs this
    Python. Other notebooks are left exactly as they are."""
    if spec is None or (metadata.get("kernelspec") or {}).get("name") != kernel_name:
        return False
    if not spec.argv or spec.argv[0] not in _SAME_PYTHON or spec.language != "python":
        return False
    # JupyterLab's NotebookPanel sets exactly these three keys from the kernel's spec.
    metadata["kernelspec"] = {
        "name": kernel_name,
        "display_name": spec.display_name,
        "language": spec.language,
    }
    metadata["language_info"] = kernel_language_info()
    return True


def keep_file_kernel_metadata(metadata: dict[str, Any], on_disk: dict[str, Any]) -> bool:
    """Give ``metadata`` (a notebook about to be saved) the ``kernelspec`` and ``language_info``
    of ``on_disk`` (the file's own notebook metadata) when both name the same kernel; a key the
    file lacks is removed. Returns whether it did; a change of kernel is saved as it is."""
    name = (metadata.get("kernelspec") or {}).get("name")
    if name is None or name != (on_disk.get("kernelspec") or {}).get("name"):
        return False
    for key in KERNEL_KEYS:
        if key in on_disk:
            metadata[key] = on_disk[key]
        else:
            metadata.pop(key, None)
    return True


class LessonContentsManager(build_async_jupytext_contents_manager_class(AsyncLargeFileManager)):
    """jupyter_server's default contents manager with jupytext's text notebooks, serving
    notebooks with the lab kernel's ``kernelspec`` and ``language_info`` so that opening one
    does not mark it modified, and saving a text notebook (a lesson source) with its file's own."""

    async def get(self, path, content=True, type=None, format=None, require_hash=False, **kw):
        extra = {"require_hash": True} if require_hash else {}
        model = await super().get(path, content=content, type=type, format=format, **extra, **kw)
        if model.get("type") == "notebook" and model.get("content") is not None:
            nb = model["content"]
            name = (nb.metadata.get("kernelspec") or {}).get("name")
            if name:
                fill_kernel_metadata(nb.metadata, self._kernel_spec(name), name)
        return model

    async def save(self, model, path=""):
        path = path.strip("/")
        if (
            model.get("type") == "notebook"
            and model.get("content") is not None
            and not path.endswith(".ipynb")
            and await self.file_exists(path)
        ):
            # jupytext's get (the parent's), not ours: the file's metadata, not the kernel's
            try:
                on_disk = await super().get(path, content=True, type="notebook")
            except HTTPError:  # not a notebook jupytext can read: the save says what is wrong
                on_disk = None
            if on_disk is not None:
                keep_file_kernel_metadata(model["content"]["metadata"], on_disk["content"].metadata)
        return await super().save(model, path)

    def _kernel_spec(self, name: str) -> Any | None:
        ksm = getattr(self.parent, "kernel_spec_manager", None)
        if ksm is None:
            return None
        try:
            return ksm.get_kernel_spec(name)
        except Exception:  # no such kernel: JupyterLab will ask which one; leave the file alone
            return None
