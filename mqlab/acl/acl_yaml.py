"""Reading and writing ``plain_acl.yml`` as 4.9.3 does, and its values as Java sees them.

Mirrors ``AclUtils#getYamlDataObject`` and ``AclUtils#writeDataObject`` (acl/common,
RocketMQ 4.9.3), which use SnakeYAML 1.30: ``new Yaml().loadAs(file, Map.class)`` and
``yaml.dumpAsMap(map)``. mqlab uses PyYAML, the well-kept YAML library the project already
depends on: both implement YAML 1.1 (``12345678`` is a number, ``yes`` a boolean), and
PyYAML's block style with ``sort_keys=False`` writes what ``dumpAsMap`` writes for these
files: keys in the map's order, sequences not indented under their key, ``null`` for a
missing value, and a string that would read back as something else quoted
(``'12345678'``). One difference on purpose: PyYAML's ``safe_load`` builds plain values
only, where SnakeYAML's default constructor would build any Java object a ``!!class`` tag
names.

A file that is missing reads as None (Java catches ``FileNotFoundException``); a file
that does not parse raises ``AclException`` with the parser's message.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mqlab.acl.acl_utils import AclException
from mqlab.remoting.fastjson import java_double_to_string

__all__ = ["get_yaml_data_object", "java_bool", "java_string", "write_data_object"]


def get_yaml_data_object(path: str) -> Any:
    """``AclUtils#getYamlDataObject``: the file's YAML, None if there is no such file.

    Raises:
        AclException: the file is not YAML.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    import yaml  # here, not at import: a broker with ACL off (every Spark executor's) needs none

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise AclException(str(e)) from None


def write_data_object(path: str, data: dict[str, Any]) -> bool:
    """``AclUtils#writeDataObject``: the map in block style, as ``Yaml#dumpAsMap``.

    Raises:
        AclException: the file cannot be written (Java's ``FileNotFoundException`` text).
    """
    import yaml

    text = yaml.dump(data, default_flow_style=False, sort_keys=False, allow_unicode=True)
    try:
        Path(path).write_text(text, encoding="utf-8")
    except FileNotFoundError:
        raise AclException(f"{path} (No such file or directory)") from None
    except IsADirectoryError:
        raise AclException(f"{path} (Is a directory)") from None
    return True


def java_string(value: Any) -> str | None:
    """A YAML value where 4.9.3 wants a ``String`` (fastjson's conversion)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double_to_string(value)
    return str(value)


def java_bool(value: Any) -> bool:
    """A YAML value where 4.9.3 wants a ``boolean`` (fastjson's conversion; null is false)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1")
    if isinstance(value, int | float):
        return value == 1
    return False
