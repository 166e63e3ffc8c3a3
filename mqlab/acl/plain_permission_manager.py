"""The accounts a broker knows, who may do what, and the five ACL admin operations.

Mirrors ``PlainPermissionManager`` (acl/plain, RocketMQ 4.9.3): ``load()``,
``load(String)``, ``buildPlainAccessResource``, ``validate``, ``checkPerm``,
``updateAccessConfig``, ``createAclAccessConfigMap``, ``deleteAccessConfig``,
``updateGlobalWhiteAddrsConfig``, ``updateAclConfigFileVersion`` and ``getAllAclConfig``.

**Files.** ``file_home`` is ``rocketmq.home.dir`` (else ``ROCKETMQ_HOME``), never the broker
config's ``rocketmqHome``. 4.9.3 reads every ``.yml``/``.yaml`` under
``<home>/conf/acl`` (sub-directories too), then ``<home>/conf/plain_acl.yml`` (the system
property ``rocketmq.acl.plain.file``, relative to the home, names another). An access key
belongs to the first file that lists it; later files' copies are skipped. No home: nothing
is loaded, and every request that no white list admits is refused.

**State.** Per file: its accounts (``acl_plain_access_resource_map``), its global white
addresses and its ``dataVersion``; across files: access key → file
(``access_key_table``) and the global white list. ``data_version`` is the default file's
(``getAclConfigDataVersion``, code 52's ``version``).

**4.9.3's quirks, kept** (each one is what the real broker does, so a learner sees it):

* ``updateAccessConfig`` on an existing account writes the file but does not change the
  account in memory (its loop compares a ``PlainAccessResource`` with a string); the file
  watcher's reload is what applies it, up to 5 s later.
* That reload (``load(String)``) keeps only access keys it has not seen before: the
  accounts of a changed file drop out of memory while their keys stay in the table, and
  their next request fails with a ``NullPointerException`` (apache/rocketmq#3887). A file
  added or removed reloads everything (``load()``), which heals it.
* ``deleteAccessConfig`` and ``updateGlobalWhiteAddrsConfig`` change only the file, too.
* A new account with a bad address pattern is refused after its key entered the table.
* ``updateAclConfigFileVersion`` reads the first account's key: a file left without
  accounts fails (``Index 0 out of bounds for length 0``).

Time comes in as ``now_ms`` (the driver's clock): it stamps ``dataVersion`` where Java
calls ``System.currentTimeMillis()``. The steps of ``validate``: mechanisms.md "Plain ACL".
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mqlab.acl.acl_utils import (
    PLAIN,
    AclException,
    JavaException,
    NullPointerException,
    frame,
)
from mqlab.acl.acl_yaml import get_yaml_data_object, java_bool, java_string, write_data_object
from mqlab.acl.permission import (
    check_permission,
    check_resource_perms,
    need_admin_perm,
    parse_perm_from_string,
    parse_resource_perms,
    perm_name,
)
from mqlab.acl.plain_access_resource import PlainAccessResource, is_retry_topic, print_str
from mqlab.acl.remote_address_strategy import RemoteAddressStrategy, get_remote_address_strategy
from mqlab.acl.signature import cal_signature
from mqlab.common.java_hash_map import hash_map_order
from mqlab.common.topic_config import DataVersion
from mqlab.trace.events import Kind

__all__ = ["PlainAccessConfig", "PlainPermissionManager", "acl_files"]

_PPM = PLAIN + "PlainPermissionManager"
C = "PlainPermissionManager"

#: The account keys of ``plain_acl.yml`` (``AclConstants``)
ACCOUNT_KEYS = ("accessKey", "secretKey", "whiteRemoteAddress", "admin", "defaultTopicPerm",
                "defaultGroupPerm", "topicPerms", "groupPerms")  # fmt: skip


class IndexOutOfBoundsException(JavaException):
    java_class = "java.lang.IndexOutOfBoundsException"


class PlainAccessConfig:
    """``PlainAccessConfig`` (common): one account as the YAML and code 54 spell it."""

    __slots__ = (
        "access_key", "secret_key", "white_remote_address", "admin", "default_topic_perm",
        "default_group_perm", "topic_perms", "group_perms",
    )  # fmt: skip

    def __init__(
        self,
        access_key: str | None = None,
        secret_key: str | None = None,
        white_remote_address: str | None = None,
        admin: bool = False,
        default_topic_perm: str | None = None,
        default_group_perm: str | None = None,
        topic_perms: list[str] | None = None,
        group_perms: list[str] | None = None,
    ) -> None:
        self.access_key = access_key
        self.secret_key = secret_key
        self.white_remote_address = white_remote_address
        self.admin = admin
        self.default_topic_perm = default_topic_perm
        self.default_group_perm = default_group_perm
        self.topic_perms = topic_perms
        self.group_perms = group_perms

    @classmethod
    def from_yaml(cls, d: Any) -> PlainAccessConfig:
        """An account map of the YAML, converted as fastjson's ``toJavaList`` converts it."""
        if not isinstance(d, dict):
            raise AclException(f"can not cast to PlainAccessConfig, value : {d}")

        def strings(v: Any) -> list[str] | None:
            if v is None:
                return None
            return [java_string(x) for x in (v if isinstance(v, list) else [v])]

        return cls(
            access_key=java_string(d.get("accessKey")),
            secret_key=java_string(d.get("secretKey")),
            white_remote_address=java_string(d.get("whiteRemoteAddress")),
            admin=java_bool(d.get("admin")),
            default_topic_perm=java_string(d.get("defaultTopicPerm")),
            default_group_perm=java_string(d.get("defaultGroupPerm")),
            topic_perms=strings(d.get("topicPerms")),
            group_perms=strings(d.get("groupPerms")),
        )

    def to_json_dict(self) -> dict[str, Any]:
        """fastjson's bean order (names sorted), nulls left out: code 54's body."""
        d = {
            "accessKey": self.access_key,
            "admin": self.admin,
            "defaultGroupPerm": self.default_group_perm,
            "defaultTopicPerm": self.default_topic_perm,
            "groupPerms": self.group_perms,
            "secretKey": self.secret_key,
            "topicPerms": self.topic_perms,
            "whiteRemoteAddress": self.white_remote_address,
        }
        return {k: v for k, v in d.items() if v is not None}


def acl_files(acl_dir: str, default_acl_file: str, tools_file: str) -> list[str]:
    """``PlainPermissionManager#getAllAclFiles`` + the default file: every ``.yml`` /
    ``.yaml`` under ``acl_dir`` (depth first, names sorted where Java takes the directory's
    order), then the default file if it exists and is not listed yet."""
    out = _walk(acl_dir, tools_file)
    if os.path.exists(default_acl_file) and default_acl_file not in out:
        out.append(default_acl_file)
    return out


def _walk(path: str, tools_file: str) -> list[str]:
    if not os.path.exists(path):
        return []
    out: list[str] = []
    try:
        names = sorted(os.listdir(path))
    except NotADirectoryError:
        return []
    for name in names:
        full = os.path.abspath(os.path.join(path, name))
        if full == tools_file:
            continue
        if full.endswith(".yml") or full.endswith(".yaml"):
            out.append(full)
        elif os.path.isdir(full):
            out.extend(_walk(full, tools_file))
    return out


class PlainPermissionManager:
    """The ACL engine of one broker.

    Args:
        file_home: ``rocketmq.home.dir`` / ``ROCKETMQ_HOME``; None: no files.
        now_ms: the driver's clock (``dataVersion`` stamps).
        tracer: a ``NodeTracer`` for the validation steps, or None.
        plain_file: ``rocketmq.acl.plain.file`` (default ``conf/plain_acl.yml``).

    Raises:
        AclException: a file that is empty, does not parse, or has a bad account or
            pattern (4.9.3's broker does not start then).
    """

    def __init__(
        self,
        file_home: str | None,
        *,
        now_ms: Callable[[], int],
        tracer: Any = None,
        plain_file: str = "conf/plain_acl.yml",
    ) -> None:
        self.file_home = file_home
        self.now_ms = now_ms
        self.tracer = tracer
        home = str(file_home)  # Java concatenates a null home as "null"
        self.default_acl_dir = home + os.sep + "conf" + os.sep + "acl"
        self.default_acl_file = home + os.sep + plain_file
        #: MixAll.ACL_CONF_TOOLS_FILE, as getAllAclFiles compares it (home + "/conf/tools.yml")
        self.tools_file = home + "/conf/tools.yml"
        self.acl_plain_access_resource_map: dict[str, dict[str, PlainAccessResource]] = {}
        self.access_key_table: dict[str, str] = {}
        self.global_white_remote_address_strategy: list[RemoteAddressStrategy] = []
        self.global_white_remote_address_strategy_map: dict[str, list[RemoteAddressStrategy]] = {}
        self.data_version_map: dict[str, DataVersion] = {}
        self.data_version = DataVersion(timestamp=now_ms())
        self.file_list: list[str] = []
        self.load()

    # -- loading ----------------------------------------------------------------------------------
    def load(self) -> None:
        """``#load()``: every file, from scratch; the tables are swapped in at the end."""
        if not self.file_home:
            return
        resource_map: dict[str, dict[str, PlainAccessResource]] = {}
        key_table: dict[str, str] = {}
        white: list[RemoteAddressStrategy] = []
        white_map: dict[str, list[RemoteAddressStrategy]] = {}
        versions: dict[str, DataVersion] = {}
        self.file_list = acl_files(self.default_acl_dir, self.default_acl_file, self.tools_file)
        for path in self.file_list:
            data = _map(get_yaml_data_object(path), path)
            strategies = [
                get_remote_address_strategy(java_string(a))
                for a in _list(data, "globalWhiteRemoteAddresses", path)
            ]
            if strategies:
                white_map[path] = strategies
                white.extend(strategies)
            accounts: dict[str, PlainAccessResource] = {}
            for d in _list(data, "accounts", path):
                resource = self.build_plain_access_resource(PlainAccessConfig.from_yaml(d))
                if resource.access_key not in key_table:  # a key belongs to its first file
                    accounts[resource.access_key] = resource
                    key_table[resource.access_key] = path
            if accounts:
                resource_map[path] = accounts
            versions[path] = self._file_version(data)
        if self.default_acl_file in versions:
            self.data_version.assign_new_one(versions[self.default_acl_file])
        self.data_version_map = versions
        self.global_white_remote_address_strategy_map = white_map
        self.global_white_remote_address_strategy = white
        self.acl_plain_access_resource_map = resource_map
        self.access_key_table = key_table
        self._trace_loaded("load", None)

    def load_file(self, path: str) -> None:
        """``#load(String)``: one changed file, over what is loaded (see the quirks above)."""
        resources: dict[str, PlainAccessResource] = {}
        data = _map(get_yaml_data_object(path), path)
        strategies = [
            get_remote_address_strategy(java_string(a))
            for a in _list(data, "globalWhiteRemoteAddresses", path)
        ]
        self.global_white_remote_address_strategy.extend(strategies)
        old = self.global_white_remote_address_strategy_map.get(path)
        if old is not None:
            for s in old:
                self.global_white_remote_address_strategy.remove(s)
            self.global_white_remote_address_strategy_map[path] = strategies
        for d in _list(data, "accounts", path):
            resource = self.build_plain_access_resource(PlainAccessConfig.from_yaml(d))
            if resource.access_key not in self.access_key_table:
                resources[resource.access_key] = resource
                self.access_key_table[resource.access_key] = path
        version = self._file_version(data)
        self.acl_plain_access_resource_map[path] = resources
        self.data_version_map[path] = version
        if path == self.default_acl_file:
            self.data_version.assign_new_one(version)
        self._trace_loaded("load(file)", path)

    def relative(self, path: str | None) -> str | None:
        """``path`` under the home, as the trace shows it (the home differs between runs)."""
        home = str(self.file_home) + os.sep
        return path[len(home) :] if path is not None and path.startswith(home) else path

    def _file_version(self, data: dict[str, Any]) -> DataVersion:
        version = DataVersion(timestamp=self.now_ms())
        listed = data.get("dataVersion")
        if listed:
            first = listed[0] if isinstance(listed, list) else listed
            if isinstance(first, dict):
                try:
                    version.timestamp = int(first.get("timestamp", version.timestamp))
                    version.counter = int(first.get("counter", 0))
                except (TypeError, ValueError):
                    raise AclException(f"bad dataVersion {first!r}") from None
        return version

    def _trace_loaded(self, how: str, path: str | None) -> None:
        if self.tracer is not None and self.tracer.enabled:
            in_memory = sum(len(m) for m in self.acl_plain_access_resource_map.values())
            self.tracer.emit(
                C + ".load", how, Kind.STATE, file=self.relative(path), files=len(self.file_list),
                access_keys=len(self.access_key_table), accounts=in_memory,
                global_white=len(self.global_white_remote_address_strategy),
                text=f"{how}: {len(self.access_key_table)} access key(s), {in_memory} "
                f"account(s) in memory, {len(self.global_white_remote_address_strategy)} "
                "global white pattern(s)",
            )  # fmt: skip

    # -- accounts ---------------------------------------------------------------------------------
    @staticmethod
    def check_plain_access_config(config: PlainAccessConfig) -> None:
        """``#checkPlainAccessConfig``: both keys present and longer than 6 characters."""
        ak, sk = config.access_key, config.secret_key
        if ak is None or sk is None or len(ak) <= 6 or len(sk) <= 6:
            raise AclException(
                f"The accessKey={_java(ak)} and secretKey={_java(sk)} cannot be null and "
                "length should longer than 6"
            )

    def build_plain_access_resource(self, config: PlainAccessConfig) -> PlainAccessResource:
        """``#buildPlainAccessResource``: an account's grants, its patterns parsed."""
        self.check_plain_access_config(config)
        resource = PlainAccessResource(
            access_key=config.access_key,
            secret_key=config.secret_key,
            white_remote_address=config.white_remote_address,
            admin=config.admin,
            default_group_perm=parse_perm_from_string(config.default_group_perm),
            default_topic_perm=parse_perm_from_string(config.default_topic_perm),
        )
        for name, perm in parse_resource_perms(config.group_perms, False).items():
            resource.add_resource_and_perm(name, perm)
        for name, perm in parse_resource_perms(config.topic_perms, True).items():
            resource.add_resource_and_perm(name, perm)
        resource.remote_address_strategy = get_remote_address_strategy(config.white_remote_address)
        return resource

    # -- validate ---------------------------------------------------------------------------------
    def validate(self, need: PlainAccessResource) -> str:
        """Admit the request, or raise why not. Returns the step that admitted it.

        Mirrors ``PlainPermissionManager#validate`` and ``#checkPerm``:

        1. a global white pattern matches the client's IP: admitted;
        2. no ``AccessKey``: refused;
        3. an access key no file lists: refused;
        4. the account's own white pattern matches: admitted, unsigned (4.9.3 checks no
           signature and no perm then);
        5. the signature over the content with the account's secret key differs: refused;
        6. ``checkPerm``: an admin-only code from a non-admin; then each needed resource
           against the account's perm for it, or its default perm.

        Raises:
            AclException: steps 2, 3, 5, 6, with 4.9.3's messages and frames.
            NullPointerException: step 4 on an access key whose account is gone from
                memory (apache/rocketmq#3887).
        """
        ip = need.white_remote_address
        # step 1
        for strategy in self.global_white_remote_address_strategy:
            if strategy.match(ip):
                self._step("1", "admit", f"{ip} matches a global white address ({strategy.name})")
                return "1"
        self._step("1", "next", f"{ip} matches no global white address")
        # step 2
        ak = need.access_key
        if ak is None:
            self._refuse("2", "No accessKey is configured", 636)
        # step 3
        if ak not in self.access_key_table:
            self._refuse("3", f"No acl config for {ak}", 640)
        # step 4
        path = self.access_key_table[ak]
        accounts = self.acl_plain_access_resource_map.get(path)
        if accounts is None:
            self._npe('Cannot invoke "java.util.Map.get(Object)" because the return value of '
                      '"java.util.Map.get(Object)" is null', 645)  # fmt: skip
        owned = accounts.get(ak)
        if owned is None:
            self._npe('Cannot invoke "org.apache.rocketmq.acl.plain.PlainAccessResource.'
                      'getRemoteAddressStrategy()" because "ownedAccess" is null', 646)  # fmt: skip
        if owned.remote_address_strategy.match(ip):
            self._step("4", "admit", f"{ip} matches {ak}'s white address "
                       f"{owned.white_remote_address!r}: no signature checked")  # fmt: skip
            return "4"
        self._step("4", "next", f"{ip} is not {ak}'s white address")
        # step 5
        signature = cal_signature(need.content or b"", owned.secret_key)
        if signature != need.signature:
            self._refuse("5", f"Check signature failed for accessKey={ak}", 653,
                         expected=signature, got=need.signature)  # fmt: skip
        self._step("5", "next", f"signature of {ak} checks")
        # step 6
        self.check_perm(need, owned)
        return "6"

    def check_perm(self, need: PlainAccessResource, owned: PlainAccessResource) -> None:
        """``#checkPerm`` (step 6): the admin flag, then each resource's perm."""
        if need_admin_perm(need.request_code) and not owned.admin:
            self._refuse(
                "6", f"Need admin permission for request code={need.request_code}, "
                f"but accessKey={owned.access_key} is not", 553, method="checkPerm",
            )  # fmt: skip
        needed_map = need.resource_perm_map
        owned_map = owned.resource_perm_map
        if needed_map is None:
            self._step("6", "admit", f"code {need.request_code} needs no resource")
            return
        if owned_map is None and owned.admin:
            self._step("6", "admit", f"{owned.access_key} is an admin with no perms listed")
            return
        # Java iterates a HashMap: which refusal comes first is its order
        for resource in hash_map_order(needed_map):
            needed = needed_map[resource]
            is_group = is_retry_topic(resource)
            if owned_map is None or resource not in owned_map:
                owned_perm = owned.default_group_perm if is_group else owned.default_topic_perm
                line, source = 578, "default"
            else:
                owned_perm, line, source = owned_map[resource], 583, "listed"
            if not check_permission(needed, owned_perm):
                self._refuse("6", f"No default permission for {print_str(resource, is_group)}",
                             line, method="checkPerm", resource=resource,
                             needed=perm_name(needed), owned=perm_name(owned_perm))  # fmt: skip
            self._step("6", "next", f"{print_str(resource, is_group)}: needs {perm_name(needed)}, "
                       f"{source} perm {perm_name(owned_perm)}")  # fmt: skip
        self._step("6", "admit", "every resource's perm checks")

    def _step(self, step: str, outcome: str, text: str, **fields: Any) -> None:
        if self.tracer is not None and self.tracer.enabled:
            self.tracer.emit(C + ".validate", step, outcome=outcome, text=text, **fields)

    def _refuse(self, step: str, message: str, line: int, method: str = "validate",
                **fields: Any) -> None:  # fmt: skip
        self._step(step, "refuse", message, **fields)
        raise AclException(message, frame(_PPM, method, line))

    def _npe(self, message: str, line: int) -> None:
        self._step("4", "refuse", "NullPointerException: " + message)
        raise NullPointerException(message, frame(_PPM, "validate", line))

    # -- the admin operations (codes 50, 51, 53) ----------------------------------------------------
    def update_access_config(self, config: PlainAccessConfig | None) -> bool:
        """``#updateAccessConfig`` (UPDATE_AND_CREATE_ACL_CONFIG, 50).

        Raises:
            AclException, JavaException: what 4.9.3 throws; the processor puts the message
                in the remark.
        """
        if config is None:
            raise AclException(
                "Parameter value plainAccessConfig is null, Please check your parameter"
            )
        self.check_plain_access_config(config)
        check_resource_perms(config.topic_perms)
        check_resource_perms(config.group_perms)
        ak = config.access_key
        if ak in self.access_key_table:
            path = self.access_key_table[ak]
            data = get_yaml_data_object(path)
            if data is None:
                raise NullPointerException(
                    'Cannot invoke "java.util.Map.get(Object)" because "aclAccessConfigMap" is null'
                )
            accounts = _map(data, path).get("accounts")
            if accounts is None:
                raise NullPointerException(
                    'Cannot invoke "java.util.List.iterator()" because "accounts" is null'
                )
            accounts = _list(data, "accounts", path) if accounts else []
            for account in accounts:
                if isinstance(account, dict) and account.get("accessKey") == ak:
                    accounts.remove(account)
                    accounts.append(self.create_acl_access_config_map(account, config))
                    data["accounts"] = accounts
                    break
            account_map = self.acl_plain_access_resource_map.get(path)
            if account_map is None:
                account_map = {ak: self.build_plain_access_resource(config)}
            elif not account_map:
                account_map[ak] = self.build_plain_access_resource(config)
            # else: Java compares each PlainAccessResource with the key string, never equal
            self.acl_plain_access_resource_map[path] = account_map
            return write_data_object(path, self.update_acl_config_file_version(data))
        path = self.default_acl_file
        if not self.acl_plain_access_resource_map.get(path):
            try:
                Path(path).touch(exist_ok=True)
            except OSError:
                pass  # Java logs the IOException and goes on
        data = get_yaml_data_object(path)
        fresh = data is None  # Java: a new HashMap, written in hash order
        if fresh:
            data = {"accounts": []}
        accounts = _map(data, path).get("accounts")
        if accounts is None:
            raise NullPointerException(
                'Cannot invoke "java.util.List.add(Object)" because "accounts" is null'
            )
        accounts = _list(data, "accounts", path) if accounts else []
        accounts.append(self.create_acl_access_config_map(None, config))
        data["accounts"] = accounts
        self.access_key_table[ak] = path
        resources = self.acl_plain_access_resource_map.setdefault(path, {})
        resources[ak] = self.build_plain_access_resource(config)
        data = self.update_acl_config_file_version(data)
        if fresh:
            data = {k: data[k] for k in hash_map_order(list(data))}
        return write_data_object(path, data)

    @staticmethod
    def create_acl_access_config_map(
        existing: dict[str, Any] | None, config: PlainAccessConfig
    ) -> dict[str, Any]:
        """``#createAclAccessConfigMap``: the account's YAML map, updated in place."""
        account = {} if existing is None else existing
        ak = config.access_key
        if not ak or len(ak) <= 6:
            raise AclException(
                f"The accessKey={_java(ak)} cannot be null and length should longer than 6"
            )
        account["accessKey"] = ak
        if config.secret_key:
            if len(config.secret_key) <= 6:
                raise AclException(
                    f"The secretKey={config.secret_key} value length should longer than 6"
                )
            account["secretKey"] = config.secret_key
        if config.white_remote_address is not None:
            account["whiteRemoteAddress"] = config.white_remote_address
        account["admin"] = config.admin
        if config.default_topic_perm:
            account["defaultTopicPerm"] = config.default_topic_perm
        if config.default_group_perm:
            account["defaultGroupPerm"] = config.default_group_perm
        if config.topic_perms is not None:
            account["topicPerms"] = list(config.topic_perms)
        if config.group_perms is not None:
            account["groupPerms"] = list(config.group_perms)
        return account

    def delete_access_config(self, access_key: str | None) -> bool:
        """``#deleteAccessConfig`` (DELETE_ACL_CONFIG, 51): the file only."""
        if not access_key:
            return False
        if access_key not in self.access_key_table:
            return False
        path = self.access_key_table[access_key]
        data = get_yaml_data_object(path)
        if not data:
            raise AclException(f"the {path} file is not found or empty")
        accounts = _map(data, path).get("accounts")
        if accounts is None:
            raise NullPointerException(
                'Cannot invoke "java.util.List.iterator()" because "accounts" is null'
            )
        accounts = _list(data, "accounts", path) if accounts else []
        for account in list(accounts):
            if isinstance(account, dict) and account.get("accessKey") == access_key:
                accounts.remove(account)
                data["accounts"] = accounts
                return write_data_object(path, self.update_acl_config_file_version(data))
        return False

    def update_global_white_addrs_config(self, addrs: list[str] | None) -> bool:
        """``#updateGlobalWhiteAddrsConfig`` (UPDATE_GLOBAL_WHITE_ADDRS_CONFIG, 53): the
        default file's list replaced; a file without the key is left alone (false)."""
        if addrs is None:
            return False
        path = self.default_acl_file
        data = get_yaml_data_object(path)
        if not data:
            raise AclException(f"the {path} file is not found or empty")
        if _map(data, path).get("globalWhiteRemoteAddresses") is None:
            return False
        data["globalWhiteRemoteAddresses"] = list(addrs)
        return write_data_object(path, self.update_acl_config_file_version(data))

    def update_acl_config_file_version(self, data: dict[str, Any]) -> dict[str, Any]:
        """``#updateAclConfigFileVersion``: the file's ``dataVersion`` + 1, stamped now, and
        that version in ``data_version_map`` under the first account's file."""
        version = DataVersion(timestamp=self.now_ms())
        listed = data.get("dataVersion")
        if listed:
            first = listed[0]
            # Java casts it to long: a timestamp SnakeYAML reads as an Integer (below 2^31)
            # would fail there, which 4.9.3's own files never hold (epoch ms). mqlab lets it
            # through: the simulation's clock starts at 0 and writes small ones itself.
            ts = first.get("timestamp")
            version.timestamp = int(ts)
            version.counter = int(str(first.get("counter")))
        version.next_version(self.now_ms())
        data["dataVersion"] = [{"counter": version.counter, "timestamp": version.timestamp}]
        accounts = data.get("accounts")
        if accounts is None:
            raise NullPointerException(
                'Cannot invoke "java.util.List.get(int)" because "accounts" is null'
            )
        if not accounts:
            raise IndexOutOfBoundsException("Index 0 out of bounds for length 0")
        ak = accounts[0].get("accessKey") if isinstance(accounts[0], dict) else None
        file = self.access_key_table.get(ak) if isinstance(ak, str) else None
        self.data_version_map[file] = version  # type: ignore[index]
        return data

    # -- the read-only operations (codes 52, 54) -----------------------------------------------------
    def get_acl_config_data_version(self) -> str:
        """``#getAclConfigDataVersion``: the default file's version as fastjson writes it."""
        return (
            f'{{"counter":{self.data_version.counter},"timestamp":{self.data_version.timestamp}}}'
        )

    def all_acl_config_version_json(self) -> str:
        """``JSON.toJSONString(getDataVersionMap())``: file → version, in HashMap order."""
        parts = []
        for path in hash_map_order([k for k in self.data_version_map if k is not None]):
            v = self.data_version_map[path]
            parts.append(f'"{path}":{{"counter":{v.counter},"timestamp":{v.timestamp}}}')
        if None in self.data_version_map:
            v = self.data_version_map[None]  # type: ignore[index]
            parts.insert(0, f'null:{{"counter":{v.counter},"timestamp":{v.timestamp}}}')
        return "{" + ",".join(parts) + "}"

    def get_all_acl_config(self) -> tuple[list[str], list[PlainAccessConfig]]:
        """``#getAllAclConfig``: every loaded file's global white addresses and accounts
        (an access key's first copy only), re-read from the files."""
        white: list[str] = []
        configs: list[PlainAccessConfig] = []
        seen: set[str | None] = set()
        for path in self.file_list:
            data = _map(get_yaml_data_object(path), path)
            white.extend(java_string(a) for a in _list(data, "globalWhiteRemoteAddresses", path))
            for d in _list(data, "accounts", path):
                config = PlainAccessConfig.from_yaml(d)
                if config.access_key not in seen:
                    seen.add(config.access_key)
                    configs.append(config)
        return white, configs


def _map(data: Any, path: str) -> dict[str, Any]:
    """A file's YAML as ``load`` needs it: a non-empty map (4.9.3: ``%s file is not data``
    when empty; another shape fails its conversion to ``JSONObject``)."""
    if not data:
        raise AclException(f"{path} file is not data")
    if not isinstance(data, dict):
        raise AclException(f"{path}: expected a YAML map, got a {type(data).__name__}")
    return data


def _list(data: dict[str, Any], key: str, path: str) -> list[Any]:
    """A list-valued key of the file (absent or empty: no items)."""
    value = data.get(key)
    if not value:
        return []
    if not isinstance(value, list):
        raise AclException(f"{path}: {key} must be a YAML list, got {value!r}")
    return value


def _java(v: str | None) -> str:
    return "null" if v is None else v
