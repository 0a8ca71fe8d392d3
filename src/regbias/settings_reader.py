"""Config values -> typed, frozen settings: one generic converter instead of hand mappers.

A settings dataclass names its fields like the keys of its config group; :func:`build` walks
its type hints, converts and checks every value, builds nested dataclasses, and rejects
unknown keys, missing keys and wrong types with one line that names the config key (a group
shaped otherwise provides a ``from_config(values, key)`` classmethod). A field marked
:data:`HANDED_DOWN` takes the nearest enclosing group's key of its name (one ``analysis.seed``).
A group ``{_target_: pkg.module.Class, ...}`` builds ``Class``, a dataclass subclass of the
field's type (an abstract one needs a ``_target_``). It reads plain mappings, not OmegaConf.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

from regbias.errors import ConfigError

#: The key that names the class a config group builds (Hydra's convention).
TARGET = "_target_"
#: Field metadata of a setting that an enclosing group hands down (``field(metadata=HANDED_DOWN)``).
HANDED_DOWN = {"handed_down": True}

#: What enclosing groups hand down: a key's name -> (its full config key, its value).
Handed = Mapping[str, tuple[str, Any]]

T = TypeVar("T")


def build(kind: type[T], values: Mapping[str, Any], key: str, handed: Handed | None = None) -> T:
    """A ``kind`` dataclass (or the one its ``_target_`` names) from the config mapping at ``key``.

    Args:
        kind: the settings dataclass (a base class when the group names its ``_target_``).
        values: the config group's keys and values.
        key: the group's config key (e.g. ``distance.sinkhorn``; ``""`` for the top level).
        handed: the enclosing groups' keys, for its :data:`HANDED_DOWN` fields
            (:func:`handed_down` gives them for a group built on its own).

    Returns:
        The settings, every value converted and checked against its field's type.

    Raises:
        ConfigError: a key is unknown or missing, or a value has the wrong type; the message
            names the full config key. The dataclass's own checks may raise too.
    """
    if not isinstance(values, Mapping):
        raise ConfigError(f"{key} must be a group of settings, not {values!r}")
    kind, values = _targeted(kind, values, key)
    hints = typing.get_type_hints(kind)
    fields = [f for f in dataclasses.fields(kind) if f.init]  # type: ignore[arg-type]
    inner = {f.name for f in fields if f.metadata.get("handed_down")}
    handed = dict(handed or {})
    _check_keys(values, {f.name for f in fields} - inner, inner, key, handed)
    arguments = {}
    for field in fields:
        name = _join(key, field.name)
        if field.name in inner:
            arguments[field.name] = _handed_value(hints[field.name], name, handed)
    handed |= {k: (_join(key, k), v) for k, v in values.items()}
    for field in fields:
        name = _join(key, field.name)
        if field.name in values:
            hint = hints[field.name]
            arguments[field.name] = convert(hint, values[field.name], name, handed)
        elif field.name in inner:
            continue
        elif field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
            raise ConfigError(f"{name} has no value: set it ({name}=...)")
    return kind(**arguments)


def _check_keys(
    values: Mapping[str, Any], names: set[str], inner: set[str], key: str, handed: Handed
) -> None:
    """Refuse a key that is no field of the group, or one the group is handed down."""
    unknown = sorted(set(values) - names)
    if not unknown:
        return
    name = _join(key, unknown[0])
    if unknown[0] in inner:
        source = handed[unknown[0]][0] if unknown[0] in handed else "its enclosing group's"
        raise ConfigError(
            f"{name} is not a setting of its own: it is {source}, one value handed down to "
            "every group inside it; set that instead"
        )
    known = ", ".join(sorted(names))
    group = f"the keys of {key}" if key else "the top-level keys"
    raise ConfigError(f"{name} is not a setting; {group} are: {known}")


def _handed_value(hint: Any, name: str, handed: Handed) -> Any:
    """A :data:`HANDED_DOWN` field's value: the nearest enclosing group's key of its name."""
    own = name.rsplit(".", 1)[-1]
    if own not in handed:
        raise ConfigError(
            f"{name} is handed down from an enclosing group's {own}, and none is given"
        )
    source, value = handed[own]
    return convert(hint, value, source)


def handed_down(config: Mapping[str, Any], key: str) -> dict[str, tuple[str, Any]]:
    """What :func:`build` hands the group at ``key`` of the whole ``config`` (nearest wins).

    Returns:
        By name, the full key and value of every key of the groups enclosing ``key``.
    """
    handed: dict[str, tuple[str, Any]] = {}
    group: Any = config
    parts = key.split(".") if key else []
    for depth, part in enumerate(parts):
        prefix = ".".join(parts[:depth])
        handed |= {k: (_join(prefix, k), v) for k, v in group.items()}
        group = group[part]
    return handed


def _targeted(kind: type[T], values: Mapping[str, Any], key: str) -> tuple[type[T], dict[str, Any]]:
    """The class a group's ``_target_`` names (else ``kind``) and the group's other keys."""
    rest = {k: v for k, v in values.items() if k != TARGET}
    if TARGET in values:
        return target_class(values[TARGET], kind, _join(key, TARGET)), rest
    if inspect.isabstract(kind):
        raise ConfigError(
            f"{_join(key, TARGET)} has no value: name the class to use, a subclass of "
            f"{kind.__module__}.{kind.__qualname__} ({_join(key, TARGET)}=pkg.module.Class)"
        )
    return kind, rest


def target_class(path: object, base: type[T], key: str) -> type[T]:
    """The class that the dotted ``path`` names, checked to be a concrete subclass of ``base``.

    Raises:
        ConfigError: not a string, not importable, not a class, not a ``base``, abstract, or
            ``base`` itself.
    """
    expected = f"{base.__module__}.{base.__qualname__}"
    if not isinstance(path, str) or not path:
        raise ConfigError(f"{key} must name a class (pkg.module.Class), not {path!r}")
    try:
        chosen = _locate(path)
    except (ImportError, AttributeError) as error:
        raise ConfigError(
            f"{key}={path} cannot be imported ({type(error).__name__}: {error}): name an "
            f"importable class, a subclass of {expected}"
        ) from None
    if not isinstance(chosen, type) or not issubclass(chosen, base) or inspect.isabstract(chosen):
        raise ConfigError(f"{key}={path} is not a concrete subclass of {expected}")
    if chosen is base:  # a base class need not be abstract to be useless on its own
        raise ConfigError(
            f"{key}={path} is the base class {expected} itself: name a concrete one, a "
            "subclass of it"
        )
    return chosen


def _locate(path: str) -> object:
    """The object a dotted path names (Hydra's ``get_class`` would log an error line of its own)."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError as error:
            if error.name is None or not ".".join(parts[:cut]).startswith(error.name):
                raise  # the module exists but fails to import one of its own imports
            continue
        for attribute in parts[cut:]:
            found = getattr(found, attribute)
        return found
    raise ModuleNotFoundError(f"no module named {parts[0]!r}")


def check_choices(settings: Any, key: str) -> None:
    """Check every field typed with a ``Literal`` against its choices, as :func:`build` does.

    For settings made in Python (tests, ``dataclasses.replace``); call it from ``__post_init__``.

    Args:
        settings: a dataclass instance.
        key: its config key (e.g. ``distance.sinkhorn``), to name the field in the message.

    Raises:
        ConfigError: a field's value is none of its ``Literal`` choices (nor another type its
            annotation allows).
    """
    hints = _choice_fields(type(settings))
    for name, hint in hints.items():
        convert(hint, getattr(settings, name), _join(key, name))


#: The most relabellings or bootstrap resamples one setting may ask for: a p-value then resolves
#: to one in a million, and every draw's statistic is held in memory (8 bytes a test or pair).
MAX_DRAWS = 1_000_000


def check_draws(key: str, **counts: int) -> None:
    """Refuse a count of relabellings or resamples above :data:`MAX_DRAWS`, with its cost.

    Args:
        key: the settings' config key (e.g. ``analysis.tests.embedding``).
        counts: each field's name and value.

    Raises:
        ConfigError: a count is above :data:`MAX_DRAWS`; the message says the memory its draws
            would hold and what to set.
    """
    for name, count in counts.items():
        if count > MAX_DRAWS:
            held = 8 * count / 2**20
            size = f"{held / 1024:,.1f} GiB" if held >= 1024 else f"{held:,.0f} MiB"
            raise ConfigError(
                f"{key}.{name}={count:,} is more than the {MAX_DRAWS:,} regbias allows: the "
                f"time grows with it ({count / MAX_DRAWS:,.1f} times that of {MAX_DRAWS:,}) and "
                f"its draws' statistics alone would hold {size} per test; {MAX_DRAWS:,} already "
                f"resolves a p-value or an interval's tail to one in a million: set {key}.{name} "
                f"to {MAX_DRAWS} or less"
            )


_CHOICE_FIELDS: dict[type, dict[str, Any]] = {}


def _choice_fields(kind: type) -> dict[str, Any]:
    """The type hints of ``kind``'s fields that are, or allow, a ``Literal`` (cached)."""
    if kind not in _CHOICE_FIELDS:
        hints = typing.get_type_hints(kind)
        _CHOICE_FIELDS[kind] = {
            f.name: hints[f.name] for f in dataclasses.fields(kind) if _has_literal(hints[f.name])
        }
    return _CHOICE_FIELDS[kind]


def _has_literal(hint: Any) -> bool:
    origin = get_origin(hint)
    if origin is Literal:
        return True
    return origin in (Union, types.UnionType) and any(_has_literal(a) for a in get_args(hint))


def _join(key: str, name: str) -> str:
    return f"{key}.{name}" if key else name


def convert(hint: Any, value: Any, key: str, handed: Handed | None = None) -> Any:
    """``value`` checked against the type ``hint`` (and converted where lossless)."""
    origin, args = get_origin(hint), get_args(hint)
    if hint is Any:
        return value
    if origin in (Union, types.UnionType):
        return _union(args, value, key, handed)
    if origin is Literal:
        if value in args:
            return value
        raise ConfigError(f"{key} must be one of {', '.join(map(repr, args))}, not {value!r}")
    if dataclasses.is_dataclass(hint):
        # A dataclass whose config keys differ from its fields reads them itself.
        reader = getattr(hint, "from_config", None)
        if reader:
            return reader(value, key)
        return build(hint, value, key, handed)  # type: ignore[arg-type]
    if origin in (list, tuple, Sequence) or hint in (list, tuple):
        return _sequence(hint, origin, args, value, key)
    if origin in (dict, Mapping) or hint is dict:
        if not isinstance(value, Mapping):
            raise ConfigError(f"{key} must be a mapping, not {value!r}")
        return dict(value)
    return _scalar(hint, value, key)


def _union(args: tuple[Any, ...], value: Any, key: str, handed: Handed | None) -> Any:
    if value is None:
        if type(None) in args:
            return None
        raise ConfigError(f"{key} needs a value, not null")
    errors = []
    for option in (a for a in args if a is not type(None)):
        try:
            return convert(option, value, key, handed)
        except ConfigError as error:
            errors.append(str(error).removeprefix(f"{key} "))
    if len(errors) == 1:
        raise ConfigError(f"{key} {errors[0]}")
    raise ConfigError(f"{key}: {value!r} fits none of: {'; '.join(errors)}")


def _sequence(hint: Any, origin: Any, args: tuple[Any, ...], value: Any, key: str) -> Any:
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise ConfigError(f"{key} must be a list, not {value!r}")
    item = args[0] if args else Any
    items = [convert(item, v, f"{key}[{i}]") for i, v in enumerate(value)]
    return tuple(items) if (origin or hint) is tuple else items


def _scalar(hint: Any, value: Any, key: str) -> Any:
    number = not isinstance(value, bool)
    scalars = {
        bool: ("true or false", isinstance(value, bool)),
        int: ("an integer", isinstance(value, int) and number),
        float: ("a number", isinstance(value, int | float) and number),
        str: ("a string", isinstance(value, str)),
    }
    if hint in scalars:
        what, fits = scalars[hint]
        if not fits:
            raise ConfigError(f"{key} must be {what}, not {value!r}")
        return float(value) if hint is float else value
    if isinstance(hint, type) and not isinstance(value, hint):
        raise ConfigError(f"{key} must be a {hint.__name__}, not {value!r}")
    return value
