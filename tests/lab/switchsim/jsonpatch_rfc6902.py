# SPDX-License-Identifier: GPL-3.0-or-later
"""RFC 6902 JSON Patch / RFC 6901 JSON Pointer with python-json-patch's error texts.

SONiC's GCU applies patches with the `jsonpatch` / `jsonpointer` Python packages
(sonic-utilities setup.py: jsonpatch>=1.32.0, jsonpointer>=1.9; Debian bookworm ships
python3-jsonpatch 1.32 and python3-jsonpointer 2.3). The texts below are those packages'
(stefankoegl/python-json-patch jsonpatch.py, stefankoegl/python-json-pointer jsonpointer.py),
so a patch error reads as it does on the switch. Own code (not the library) so the
simulator does not depend on the version pinned for development.
"""
from __future__ import annotations

import copy
import json
import re
from typing import Any

_ARRAY_INDEX = re.compile("0|[1-9][0-9]*$")
_INVALID_ESCAPE = re.compile("(~[^01]|~$)")


class JsonPointerException(Exception):
    pass


class JsonPatchException(Exception):
    pass


class InvalidJsonPatch(JsonPatchException):
    pass


class JsonPatchConflict(JsonPatchException):
    pass


class JsonPatchTestFailed(JsonPatchException):
    pass


class _EndOfList:
    def __init__(self, lst: list) -> None:
        self.list_ = lst


class Pointer:
    def __init__(self, pointer: str) -> None:
        invalid = _INVALID_ESCAPE.search(pointer)
        if invalid:
            raise JsonPointerException(f"Found invalid escape {invalid.group()}")
        parts = pointer.split("/")
        if parts.pop(0) != "":
            raise JsonPointerException("Location must start with /")
        self.parts = [p.replace("~1", "/").replace("~0", "~") for p in parts]

    @staticmethod
    def get_part(doc: Any, part: str) -> Any:
        if isinstance(doc, dict):
            return part
        if isinstance(doc, (list, str)):
            if part == "-":
                return part
            if not _ARRAY_INDEX.match(str(part)):
                raise JsonPointerException("'%s' is not a valid sequence index" % part)
            return int(part)
        raise JsonPointerException("Document '%s' does not support indexing, must be mapping/sequence "
                                   "or support __getitem__" % type(doc).__name__)

    def walk(self, doc: Any, part: str) -> Any:
        part = self.get_part(doc, part)
        if isinstance(doc, (list, str)):
            if part == "-":
                return _EndOfList(doc)
            try:
                return doc[part]
            except IndexError:
                raise JsonPointerException("index '%s' is out of bounds" % (part,)) from None
        try:
            return doc[part]
        except KeyError:
            raise JsonPointerException("member '%s' not found in %s" % (part, doc)) from None

    def to_last(self, doc: Any) -> tuple[Any, Any]:
        if not self.parts:
            return doc, None
        for part in self.parts[:-1]:
            doc = self.walk(doc, part)
        return doc, self.get_part(doc, self.parts[-1])


OPS = ("add", "remove", "replace", "move", "copy", "test")


class Patch:
    """jsonpatch.JsonPatch: the constructor validates each operation as 1.32 does."""

    def __init__(self, ops: Any) -> None:
        self.ops = ops
        for op in ops:
            if isinstance(op, str):
                raise InvalidJsonPatch("Document is expected to be sequence of operations, got a sequence of strings.")
            self._check(op)

    @staticmethod
    def _check(op: Any) -> None:
        if not isinstance(op, dict) or "op" not in op:
            raise InvalidJsonPatch("Operation does not contain 'op' member")
        if not isinstance(op["op"], str):
            raise InvalidJsonPatch("Operation must be a string")
        if op["op"] not in OPS:
            raise InvalidJsonPatch("Unknown operation {!r}".format(op["op"]))
        if "path" not in op:
            raise InvalidJsonPatch("Operation must have a 'path' member")
        if not isinstance(op["path"], str):
            raise InvalidJsonPatch("Invalid 'path'")
        Pointer(op["path"])
        if op["op"] in ("move", "copy"):
            if "from" not in op:
                raise InvalidJsonPatch("The operation does not contain a 'from' member")
            Pointer(op["from"])

    def __str__(self) -> str:
        return json.dumps(self.ops)

    def apply(self, doc: Any) -> Any:
        doc = copy.deepcopy(doc)
        for op in self.ops:
            doc = _apply_one(op, doc)
        return doc


def _value(op: dict) -> Any:
    if "value" not in op:
        raise InvalidJsonPatch("The operation does not contain a 'value' member")
    return copy.deepcopy(op["value"])


def _add(pointer: Pointer, location: str, obj: Any, value: Any) -> Any:
    subobj, part = pointer.to_last(obj)
    if isinstance(subobj, list):
        if part == "-":
            subobj.append(value)
        elif part > len(subobj) or part < 0:
            raise JsonPatchConflict("can't insert outside of list")
        else:
            subobj.insert(part, value)
    elif isinstance(subobj, dict):
        if part is None:
            return value
        subobj[part] = value
    else:
        if part is None:
            raise TypeError(f"invalid document type {type(subobj)}")
        raise JsonPatchConflict(f"unable to fully resolve json pointer {location}, part {part}")
    return obj


def _remove(pointer: Pointer, obj: Any) -> Any:
    subobj, part = pointer.to_last(obj)
    if isinstance(subobj, list) and not isinstance(part, int):
        raise JsonPointerException(f"invalid array index '{part}'")
    try:
        del subobj[part]
    except (KeyError, IndexError, TypeError):
        raise JsonPatchConflict(f"can't remove a non-existent object '{part}'") from None
    return obj


def _apply_one(op: dict, obj: Any) -> Any:
    kind, location = op["op"], op["path"]
    pointer = Pointer(location)
    if kind == "add":
        return _add(pointer, location, obj, _value(op))
    if kind == "remove":
        return _remove(pointer, obj)
    if kind == "replace":
        value = _value(op)
        subobj, part = pointer.to_last(obj)
        if part is None:
            return value
        if part == "-":
            raise InvalidJsonPatch("'path' with '-' can't be applied to 'replace' operation")
        if isinstance(subobj, list):
            if part >= len(subobj) or part < 0:
                raise JsonPatchConflict("can't replace outside of list")
        elif isinstance(subobj, dict):
            if part not in subobj:
                raise JsonPatchConflict(f"can't replace a non-existent object '{part}'")
        else:
            raise JsonPatchConflict(f"unable to fully resolve json pointer {location}, part {part}")
        subobj[part] = value
        return obj
    if kind == "test":
        try:
            subobj, part = pointer.to_last(obj)
            val = subobj if part is None else pointer.walk(subobj, part)
        except JsonPointerException as exc:
            raise JsonPatchTestFailed(str(exc)) from None
        value = _value(op)
        if val != value:
            raise JsonPatchTestFailed(f"{val} ({type(val)}) is not equal to tested value {value} ({type(value)})")
        return obj
    source = Pointer(op["from"])
    subobj, part = source.to_last(obj)
    try:
        value = copy.deepcopy(subobj[part])
    except (KeyError, IndexError) as exc:
        raise JsonPatchConflict(str(exc)) from None
    if kind == "move":
        if op["from"] == location:
            return obj
        if location.startswith(op["from"] + "/"):
            raise JsonPatchConflict("Cannot move values into their own children")
        obj = _remove(source, obj)
    return _add(pointer, location, obj, value)


def make_patch(src: Any, dst: Any, path: str = "") -> list[dict]:
    """A patch from src to dst (dicts: add/remove/replace per member), as ConfigReplacer needs."""
    ops: list[dict] = []
    if isinstance(src, dict) and isinstance(dst, dict):
        for key in src:
            if key not in dst:
                ops.append({"op": "remove", "path": f"{path}/{escape(key)}"})
        for key, value in dst.items():
            if key not in src:
                ops.append({"op": "add", "path": f"{path}/{escape(key)}", "value": copy.deepcopy(value)})
            elif src[key] != value:
                ops.extend(make_patch(src[key], value, f"{path}/{escape(key)}"))
        return ops
    if src != dst:
        ops.append({"op": "replace", "path": path, "value": copy.deepcopy(dst)})
    return ops


def escape(part: str) -> str:
    return part.replace("~", "~0").replace("/", "~1")
