"""Config groups that name a class to call later: the optimiser and extra Lightning callbacks.

Both follow Hydra's ``_target_`` convention. The class a group names is resolved and checked
when the settings are read (importable, of the right kind, not the base class itself), and so
are the group's other keys against the class's signature (an argument it does not take, one it
needs and is not given), so a typo fails before any stage, with the config key; the stage then
calls that class with the group's other keys:

.. code-block:: yaml

    optimizer:            # called later with the parameter groups and the learning rate
      _target_: torch.optim.Adagrad
      _partial_: true
    callbacks:            # extra callbacks of every fit, by name
      lr_monitor:
        _target_: lightning.pytorch.callbacks.LearningRateMonitor
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import lightning as L
import torch

from regbias.errors import ConfigError
from regbias.settings_reader import TARGET, target_class

#: Hydra's key for "call later": the group gives a partial of its class.
PARTIAL = "_partial_"


@dataclass(frozen=True)
class Target:
    """A class named by a config group's ``_target_``, with the group's other keys.

    Attributes:
        target: the class's dotted path (``torch.optim.Adagrad``).
        kind: the class itself, resolved and checked when the settings are read.
        arguments: the group's other keys and values, in config order: keyword arguments of
            the call (plain config values).
    """

    #: What the named class must be a subclass of (checked when the settings are read).
    BASE: ClassVar[type] = object
    #: What :meth:`call` passes besides the group's keys: positional arguments, then keywords.
    SUPPLIED: ClassVar[tuple[int, tuple[str, ...]]] = (0, ())

    target: str
    kind: type
    arguments: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def read(cls, values: object, key: str, skip: Iterable[str] = ()) -> Any:
        """The group at ``key`` as a ``cls``, its class checked; the keys in ``skip`` dropped.

        Raises:
            ConfigError: not a group, no ``_target_``, a class that cannot be imported or is
                not a :attr:`BASE`, or keys the class cannot be called with (one it does not
                take, or one it needs missing); the message names the key.
        """
        base = f"{cls.BASE.__module__}.{cls.BASE.__qualname__}"
        if not isinstance(values, Mapping):
            raise ConfigError(
                f"{key} must be a group naming a class, a subclass of {base} "
                f"({{{TARGET}: pkg.module.Class}}), not {values!r}"
            )
        if TARGET not in values:
            raise ConfigError(
                f"{key}.{TARGET} has no value: name a subclass of {base} ({key}.{TARGET}=...)"
            )
        kind: type = target_class(values[TARGET], cls.BASE, f"{key}.{TARGET}")
        dropped = {TARGET, *skip}
        arguments = tuple((k, v) for k, v in values.items() if k not in dropped)
        names = [str(k) for k, _ in arguments]
        _check_arguments(kind, names, key, str(values[TARGET]), *cls.SUPPLIED)
        return cls(values[TARGET], kind, arguments)

    def call(self, *args: Any, **extra: Any) -> Any:
        """An instance of the class: ``args``, the group's arguments and ``extra`` keywords."""
        return self.kind(*args, **dict(self.arguments), **extra)


@dataclass(frozen=True)
class OptimizerSettings(Target):
    """The ``finetune.optimizer`` group: a ``torch.optim`` optimiser class, called later.

    The group needs ``_partial_: true``: :meth:`make` calls the class with the parameter
    groups and the learning rate (the other keys, e.g. ``momentum`` for SGD, are passed too).
    The learning rate and weight decay come from ``finetune.lr``/``head_lr`` and
    ``finetune.weight_decay``, so the group may not set them.
    """

    BASE: ClassVar[type] = torch.optim.Optimizer
    #: :meth:`make` passes the parameter groups and the learning rate.
    SUPPLIED: ClassVar[tuple[int, tuple[str, ...]]] = (1, ("lr",))
    #: Keys the fine-tuning settings own.
    OWNED: ClassVar[tuple[str, ...]] = ("params", "lr", "weight_decay")

    @classmethod
    def from_config(cls, values: object, key: str) -> OptimizerSettings:
        """The settings converter's hook: the group read, its class and keys checked.

        Raises:
            ConfigError: an unknown or non-optimiser class, ``_partial_`` not true, or a key
                that other settings own; the message names the key.
        """
        settings: OptimizerSettings = cls.read(values, key, skip=(PARTIAL,))
        assert isinstance(values, Mapping)  # read() checked it
        if values.get(PARTIAL) is not True:
            raise ConfigError(
                f"{key}.{PARTIAL} must be true: the optimizer is made later, with the model's "
                f"parameters and the learning rate ({key}.{PARTIAL}=true)"
            )
        for name, _ in settings.arguments:
            if name in cls.OWNED:
                raise ConfigError(
                    f"{key}.{name} is not an optimizer setting here: it comes from "
                    f"{'finetune.lr and finetune.head_lr' if name == 'lr' else 'finetune'} "
                    "(remove it from the optimizer group)"
                )
        return settings

    def make(self, groups: list[dict[str, Any]], lr: float) -> torch.optim.Optimizer:
        """The optimiser of parameter ``groups`` (each with its weight decay) at rate ``lr``."""
        optimizer: torch.optim.Optimizer = self.call(groups, lr=lr)
        return optimizer


@dataclass(frozen=True)
class CallbackTarget(Target):
    """One entry of ``finetune.callbacks``: a Lightning callback class and its arguments."""

    BASE: ClassVar[type] = L.Callback


@dataclass(frozen=True)
class CallbackSettings:
    """The ``finetune.callbacks`` group: extra Lightning callbacks of every fit, by name.

    Add one from the command line with
    ``+finetune.callbacks.NAME._target_=pkg.module.Callback`` (and ``+finetune.callbacks.NAME.
    ARG=...``); an entry set to null is left out. The best-checkpoint restore, early stopping
    (``finetune.patience``) and the stop check are part of every fit and need no entry.

    Attributes:
        entries: ``(name, callback)`` pairs, in config order.
    """

    entries: tuple[tuple[str, CallbackTarget], ...] = ()

    @classmethod
    def from_config(cls, values: object, key: str) -> CallbackSettings:
        """The settings converter's hook: each entry read and its class checked.

        Raises:
            ConfigError: not a mapping, or an entry that is not a Lightning callback class.
        """
        if not isinstance(values, Mapping):
            raise ConfigError(f"{key} must be a mapping of callbacks by name, not {values!r}")
        return cls(
            tuple(
                (str(name), CallbackTarget.read(group, f"{key}.{name}"))
                for name, group in values.items()
                if group is not None
            )
        )

    def instantiate(self) -> list[L.Callback]:
        """A new instance of every callback (a fit's callbacks keep state)."""
        return [target.call() for _, target in self.entries]


def _check_arguments(
    kind: type,
    names: list[str],
    key: str,
    path: str,
    positional: int = 0,
    keywords: tuple[str, ...] = (),
) -> None:
    """Whether ``kind`` (named ``path``) can be called with the keys ``names`` as keywords.

    The caller also passes ``positional`` arguments first and the ``keywords``. A class whose
    signature Python cannot read (some C extensions) is left to fail when it is called.

    Raises:
        ConfigError: a key the class takes no argument of, or an argument it needs that neither
            the group nor the caller gives; the message names the key and the way out.
    """
    try:
        parameters = list(inspect.signature(kind).parameters.values())
    except (TypeError, ValueError):
        return
    named = [p for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    supplied = {p.name for p in parameters[:positional]} | set(keywords)
    if not any(p.kind == p.VAR_KEYWORD for p in parameters):
        takes = {p.name for p in named} - supplied
        for name in names:
            if name not in takes | supplied:
                raise ConfigError(
                    f"{key}.{name} is not an argument of {path} (it takes "
                    f"{', '.join(sorted(takes)) or 'none'}): fix its name or remove it "
                    f"(~{key}.{name})"
                )
    given = supplied | set(names)
    for parameter in named:
        if parameter.default is parameter.empty and parameter.name not in given:
            raise ConfigError(
                f"{key} needs {parameter.name}: add +{key}.{parameter.name}=... ({path} has no "
                "default for it)"
            )
