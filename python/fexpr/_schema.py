"""Type hints and docstrings to JSON Schema, and the converters some hints need.

The schema is what the model sees and what fexpr binds and checks arguments against before a
tool runs. Records (dataclasses, pydantic models, TypedDicts, named tuples) are described under
``$defs`` and referenced by name; fexpr builds them from ``Point(x=1, y=2)`` or a dict and hands
the tool an instance of the class. A few hints need a conversion after that (an Enum member from
its value, a frozenset, a tuple from a list): those get a converter.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import inspect
import json
import sys
import types
import typing
from typing import Any, Callable, Optional

import docstring_parser

Converter = Optional[Callable[[Any], Any]]

_NONE_TYPE = type(None)
_MISSING = object()  # a required field: no default
_OPTIONAL = object()  # an optional field whose default fexpr cannot write down


def _is_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__total__")


def _is_namedtuple(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, tuple) and hasattr(tp, "_fields")


def _is_pydantic_model(tp: Any) -> bool:
    pydantic = sys.modules.get("pydantic")
    return (
        pydantic is not None
        and isinstance(tp, type)
        and issubclass(tp, pydantic.BaseModel)
    )


def _is_ndarray(tp: Any) -> bool:
    numpy = sys.modules.get("numpy")
    return numpy is not None and (tp is numpy.ndarray or typing.get_origin(tp) is numpy.ndarray)


def is_record_type(tp: Any) -> bool:
    """Whether ``tp`` is a class fexpr treats as a record type."""
    return isinstance(tp, type) and (
        dataclasses.is_dataclass(tp)
        or _is_pydantic_model(tp)
        or _is_typeddict(tp)
        or _is_namedtuple(tp)
    )


def json_default(value: Any) -> Any:
    """``value`` as JSON for a schema's ``default``, or ``_MISSING`` if it has no JSON form."""
    if isinstance(value, enum.Enum):
        value = value.value
    try:
        text = json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return _MISSING
    return json.loads(text)


def docstring(obj: Any) -> tuple[str, dict[str, str]]:
    """The description and the per-parameter texts of ``obj``'s docstring (Google, NumPy, reST)."""
    doc = inspect.getdoc(obj)
    if not doc:
        return "", {}
    parsed = docstring_parser.parse(doc)
    parts = [p for p in (parsed.short_description, parsed.long_description) if p]
    params = {p.arg_name: p.description for p in parsed.params if p.description}
    return "\n\n".join(parts), params


def _str_keys(convert: Converter) -> Callable[[dict], dict]:
    def check(d: dict) -> dict:
        for k in d:
            if not isinstance(k, str):
                raise TypeError(f"the keys must be str, not {type(k).__name__} ({k!r:.40})")
        return d if convert is None else {k: convert(v) for k, v in d.items()}

    return check


class Records:
    """The record types met while describing tools and context: their schemas (``$defs``),
    the classes, and how to build each from its fields."""

    def __init__(self) -> None:
        self.defs: dict[str, dict] = {}
        self.classes: dict[str, type] = {}
        self.builders: dict[str, Callable[..., Any]] = {}

    def merge(self, other: "Records") -> None:
        for name, cls in other.classes.items():
            self._claim(name, cls)
            self.defs[name] = other.defs[name]
            self.builders[name] = other.builders[name]

    def _claim(self, name: str, cls: type) -> bool:
        """Register ``name`` for ``cls``; False if it already was. Two classes may not share
        a name: fexpr's record types are named."""
        known = self.classes.get(name)
        if known is None:
            self.classes[name] = cls
            return True
        if known is cls:
            return False
        raise TypeError(
            f"two record types are named {name!r}: {known.__module__}.{known.__qualname__} and "
            f"{cls.__module__}.{cls.__qualname__}; rename one"
        )

    def names(self) -> dict[type, str]:
        return {cls: name for name, cls in self.classes.items()}

    # --- schemas -------------------------------------------------------------------------

    def schema(self, tp: Any) -> tuple[dict, Converter]:
        """The JSON Schema of hint ``tp`` and the converter its value needs (or None)."""
        if tp is inspect.Parameter.empty or tp is Any or tp is object:
            return {}, None
        if isinstance(tp, (str, typing.ForwardRef)):
            return {}, None  # an annotation that could not be resolved: anything
        origin = typing.get_origin(tp)
        args = typing.get_args(tp)
        if origin is typing.Annotated:
            schema, convert = self.schema(args[0])
            text = _annotated_description(args[1:])
            if text:
                schema = {**schema, "description": text}
            return schema, convert
        if tp is None or tp is _NONE_TYPE:
            return {"type": "null"}, None
        if tp is bool:
            return {"type": "boolean"}, None
        if tp is int:
            return {"type": "integer"}, None
        if tp is float:
            return {"type": "number"}, None
        if tp is str:
            return {"type": "string"}, None
        if _is_ndarray(tp):
            return {"type": "array", "format": "ndarray", "items": {}}, None
        if origin is typing.Union or (hasattr(types, "UnionType") and origin is types.UnionType):
            return self._union(args)
        if origin is typing.Literal:
            return _literal(args), None
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            return _enum(tp), _enum_converter(tp)
        if is_record_type(tp):
            return {"$ref": f"#/$defs/{self.record(tp)}"}, None
        if tp in (list, set, frozenset, tuple, dict) or origin in (
            list,
            set,
            frozenset,
            tuple,
            dict,
        ) or origin in _ABSTRACT:
            return self._collection(origin or tp, args)
        return {}, None

    def _union(self, args: tuple) -> tuple[dict, Converter]:
        parts = [self.schema(a) for a in args]
        schemas = [s for s, _ in parts]
        converters = [c for _, c in parts if c is not None]
        schema = {"anyOf": schemas}
        if not converters:
            return schema, None

        def convert(value: Any) -> Any:
            if value is None:
                return None
            for c in converters:
                try:
                    return c(value)
                except (TypeError, ValueError, KeyError):
                    continue
            return value

        return schema, convert

    def _collection(self, origin: Any, args: tuple) -> tuple[dict, Converter]:
        kind = _ABSTRACT.get(origin, origin)
        if kind is dict:
            value = self.schema(args[1]) if len(args) == 2 else ({}, None)
            schema = {"type": "object"}
            if value[0]:
                schema["additionalProperties"] = value[0]
            convert = value[1]
            if args and args[0] is str:
                # A JSON object's keys are strings, and so are the keys the annotation asks
                # for: an expression's `{1: 2}` is refused, not handed over.
                return schema, _str_keys(convert)
            return schema, (None if convert is None else lambda d: {k: convert(v) for k, v in d.items()})
        if kind is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
            if args == ((),):  # tuple[()]
                return {"type": "array", "maxItems": 0}, tuple
            items = [self.schema(a) for a in args]
            schema = {
                "type": "array",
                "prefixItems": [s for s, _ in items],
                "minItems": len(items),
                "maxItems": len(items),
            }
            converters = [c for _, c in items]
            if not any(converters):
                return schema, None
            return schema, lambda t: tuple(c(v) if c else v for c, v in zip(converters, t))
        item, convert = self.schema(args[0]) if args else ({}, None)
        schema = {"type": "array"}
        if item:
            schema["items"] = item
        if kind in (set, frozenset):
            schema["uniqueItems"] = True
        # fexpr hands lists, sets and tuples as such; other kinds are rebuilt.
        rebuild = {tuple: tuple, frozenset: frozenset}.get(kind)
        if convert is None and rebuild is None:
            return schema, None
        if kind is set:
            rebuild = set
        elif rebuild is None:
            rebuild = list
        return schema, lambda seq: rebuild(convert(v) for v in seq) if convert else rebuild(seq)

    # --- records -------------------------------------------------------------------------

    def record(self, cls: type) -> str:
        """Describe record class ``cls`` under ``$defs`` (once); its name."""
        name = cls.__name__
        if not self._claim(name, cls):
            return name
        self.defs[name] = {}  # a placeholder: recursive types refer to it by name
        description, docs = docstring(cls)
        if dataclasses.is_dataclass(cls) and description.startswith(f"{name}("):
            description = ""  # the signature dataclasses write when there is no docstring
        hints = _hints(cls)
        properties: dict[str, dict] = {}
        required: list[str] = []
        converters: dict[str, Callable[[Any], Any]] = {}
        for field, default, text in _record_fields(cls, hints):
            schema, convert = self.schema(hints.get(field, Any))
            text = text or docs.get(field)
            if text:
                schema = {**schema, "description": text}
            if default is _MISSING:
                required.append(field)
            elif default is not _OPTIONAL:
                value = json_default(default)
                if value is not _MISSING:
                    schema = {**schema, "default": value}
            properties[field] = schema
            if convert is not None:
                converters[field] = convert
        schema: dict = {
            "type": "object",
            "title": name,
            "properties": properties,
            "required": required,
            "additionalProperties": False,
        }
        if description:
            schema["description"] = description
        self.defs[name] = schema
        self.builders[name] = _builder(cls, converters)
        return name

    def record_schema(self, cls: type) -> dict:
        """The schema of record class ``cls`` with the ``$defs`` it refers to."""
        name = self.record(cls)
        return {**self.defs[name], "$defs": dict(self.defs)}


_ABSTRACT = {
    collections.abc.Sequence: list,
    collections.abc.MutableSequence: list,
    collections.abc.Iterable: list,
    collections.abc.Collection: list,
    collections.abc.Set: set,
    collections.abc.MutableSet: set,
    collections.abc.Mapping: dict,
    collections.abc.MutableMapping: dict,
}


def _annotated_description(meta: tuple) -> str:
    for m in meta:
        if isinstance(m, str):
            return m
        text = getattr(m, "description", None)
        if isinstance(text, str):
            return text
    return ""


def _literal(values: tuple) -> dict:
    values = [v.value if isinstance(v, enum.Enum) else v for v in values]
    schema: dict = {"enum": list(values)}
    kinds = {type(v) for v in values}
    names = {bool: "boolean", int: "integer", float: "number", str: "string", _NONE_TYPE: "null"}
    if len(kinds) == 1 and next(iter(kinds)) in names:
        schema = {"type": names[next(iter(kinds))], **schema}
    return schema


def _enum(cls: type) -> dict:
    schema = _literal(tuple(m.value for m in cls))
    schema["title"] = cls.__name__
    description, _ = docstring(cls)
    if description and description != "An enumeration.":
        schema["description"] = description
    return schema


def _enum_converter(cls: type) -> Callable[[Any], Any]:
    def convert(value: Any) -> Any:
        return value if isinstance(value, cls) else cls(value)

    return convert


def _hints(obj: Any) -> dict[str, Any]:
    """Resolved type hints of ``obj`` (with ``Annotated`` kept); raw annotations if a forward
    reference cannot be resolved."""
    try:
        return typing.get_type_hints(obj, include_extras=True)
    except Exception:
        return dict(getattr(obj, "__annotations__", {}) or {})


def _record_fields(cls: type, hints: dict) -> list[tuple[str, Any, str]]:
    """``(name, default, description)`` for each field a record is built from; the default is
    ``_MISSING`` for a required field and ``_OPTIONAL`` for an optional one without a default."""
    if dataclasses.is_dataclass(cls):
        out = []
        for f in dataclasses.fields(cls):
            if not f.init:
                continue
            if f.default is not dataclasses.MISSING:
                default = f.default
            elif f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
                default = f.default_factory()  # type: ignore[misc]
            else:
                default = _MISSING
            out.append((f.name, default, f.metadata.get("description", "") or f.metadata.get("desc", "")))
        return out
    if _is_pydantic_model(cls):
        out = []
        for name, info in cls.model_fields.items():
            default = _MISSING if info.is_required() else info.get_default(call_default_factory=True)
            out.append((info.alias or name, default, info.description or ""))
        return out
    if _is_typeddict(cls):
        required = getattr(cls, "__required_keys__", frozenset(hints))
        return [(name, _MISSING if name in required else _OPTIONAL, "") for name in hints]
    if _is_namedtuple(cls):
        defaults = getattr(cls, "_field_defaults", {})
        return [(name, defaults.get(name, _MISSING), "") for name in cls._fields]
    return []


def _builder(cls: type, converters: dict[str, Callable[[Any], Any]]) -> Callable[..., Any]:
    """How fexpr builds an instance of ``cls`` from its fields' values."""
    make: Callable[..., Any] = dict if _is_typeddict(cls) else cls
    if not converters:
        return make

    def build(**fields: Any) -> Any:
        for name, convert in converters.items():
            if name in fields:
                fields[name] = convert(fields[name])
        return make(**fields)

    build.__qualname__ = f"build_{cls.__name__}"
    return build
