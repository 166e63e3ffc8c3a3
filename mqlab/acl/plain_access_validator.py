"""The broker's ACL hook: every request parsed and validated before its processor.

Mirrors ``PlainAccessValidator`` (acl/plain), the RPC hook ``BrokerController#initialAcl``
registers (``validator.validate(validator.parse(request, remoteAddr))`` in
``doBeforeRequest``), and what ``NettyRemotingAbstract#processRequestCommand`` does when a
hook throws (RocketMQ 4.9.3):

1. parse the request (``plain_access_resource.parse``);
2. validate it (``PlainPermissionManager#validate``, steps 1-6 there);
3. on a refusal: no processor runs; the answer is SYSTEM_ERROR (1) with the remark
   ``RemotingHelper#exceptionSimpleDesc(e)``: the exception's class and message, a comma,
   and the frame that threw it, e.g. ``org.apache.rocketmq.acl.common.AclException: No acl
   config for bob1234, org.apache.rocketmq.acl.plain.PlainPermissionManager.validate(
   PlainPermissionManager.java:640)``. A one-way request gets no answer at all.

The hook runs for every request code, the broker's own and unknown ones alike: in 4.9.3
``AdminBrokerProcessor`` is the default processor, so no code reaches the broker without
passing the hook. It also owns the file watcher (``AclFileWatchService``), which the broker
turns on its clock. Steps: mechanisms.md "Plain ACL", the hook's table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mqlab.acl.acl_file_watch_service import AclFileWatchService
from mqlab.acl.acl_utils import JavaException
from mqlab.acl.permission import perm_name
from mqlab.acl.plain_access_resource import PlainAccessResource, parse
from mqlab.acl.plain_permission_manager import PlainPermissionManager
from mqlab.remoting.codes import ResponseCode, code_name
from mqlab.remoting.command import RemotingCommand
from mqlab.trace.events import Kind

__all__ = ["PlainAccessValidator"]

C = "PlainAccessValidator"


class PlainAccessValidator:
    """``PlainAccessValidator`` with its manager and watcher.

    Args:
        file_home: ``rocketmq.home.dir`` / ``ROCKETMQ_HOME`` (None: no files).
        now_ms: the driver's clock.
        tracer: a ``NodeTracer``, or None.
    """

    def __init__(
        self, file_home: str | None, *, now_ms: Callable[[], int], tracer: Any = None
    ) -> None:
        self.tracer = tracer
        self.acl_plug_engine = PlainPermissionManager(file_home, now_ms=now_ms, tracer=tracer)
        m = self.acl_plug_engine
        self.watch_service = AclFileWatchService(
            m.default_acl_dir, m.default_acl_file,
            on_file_changed=m.load_file, on_file_num_changed=lambda _path: m.load(),
        )  # fmt: skip

    def parse(self, request: RemotingCommand, remote_addr: str | None) -> PlainAccessResource:
        """``PlainAccessValidator#parse``."""
        return parse(request, remote_addr)

    def validate(self, resource: PlainAccessResource) -> str:
        """``PlainAccessValidator#validate``: the step that admitted it."""
        return self.acl_plug_engine.validate(resource)

    def do_before_request(
        self, remote_addr: str | None, request: RemotingCommand
    ) -> RemotingCommand | None:
        """The hook (steps 1-3): None to go on to the processor, else the refusal (which
        the broker does not send for a one-way request)."""
        try:
            # step 1
            resource = self.parse(request, remote_addr)
            if self.tracer is not None and self.tracer.enabled:
                needs = {r: perm_name(p) for r, p in (resource.resource_perm_map or {}).items()}
                self.tracer.emit(
                    C + ".parse", "1", request=code_name(request.code, is_response=False),
                    ip=resource.white_remote_address, access_key=resource.access_key,
                    signed=resource.signature is not None, needs=needs,
                    text=f"{code_name(request.code, is_response=False)} from {resource.white_remote_address} "
                    f"as {resource.access_key}: needs {needs or 'no resource'}",
                )  # fmt: skip
            # step 2
            self.validate(resource)
            return None
        except JavaException as e:
            # step 3
            remark = e.simple_desc()
            if self.tracer is not None and self.tracer.enabled:
                self.tracer.emit(
                    C + ".doBeforeRequest", "3", Kind.ERROR, code="SYSTEM_ERROR",
                    request=code_name(request.code, is_response=False), remote_addr=remote_addr,
                    oneway=request.is_oneway, remark=remark,
                    text=f"{code_name(request.code, is_response=False)} refused: {e.message}",
                )  # fmt: skip
            return RemotingCommand.create_response(ResponseCode.SYSTEM_ERROR, remark, ext_fields={})

    def watch(self) -> None:
        """One turn of the file watcher; a reload that throws is traced, not raised."""
        try:
            reloaded = self.watch_service.run_once()
        except (JavaException, OSError, ValueError, TypeError, AttributeError) as e:
            # AclFileWatchService#run catches Exception, logs it, and looks again in 5 s
            error = e.to_string() if isinstance(e, JavaException) else repr(e)
            if self.tracer is not None and self.tracer.enabled:
                self.tracer.emit("AclFileWatchService.run", "reload", Kind.ERROR,
                                 error=error, text=f"reload failed: {error}")  # fmt: skip
            return
        if reloaded and self.tracer is not None and self.tracer.enabled:
            for how, full in reloaded:
                path = self.acl_plug_engine.relative(full)
                self.tracer.emit("AclFileWatchService.run", "2" if how == "all" else "3",
                                 Kind.STATE, reload=how, file=path,
                                 text=f"reloaded {'every ACL file' if how == 'all' else path}")  # fmt: skip
