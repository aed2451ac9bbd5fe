"""Connectors of the external systems an integration mirrors, and the one place they are found.

A connector is one module of this package that declares `SPEC` (domain/integrations.ConnectorSpec: its kind, the
source its mirrors carry, the settings it reads and which are secrets, whether only the owner may connect it) and
`connector(settings)` (it, made for this deployment: ports/integrations.Connector). Nothing lists them: `found`
walks the package (pkgutil), so a new connector is its module and its test. The domain's checks, the published
schema of POST /integrations, GET /integrations/kinds and the dashboard's connect forms are all made from the specs.

Every module is imported at the first `found` (a brain's start): a connector keeps the import of a heavy library
(icalendar, notion-client) in the code that calls it, so a start that syncs nothing does not pay for it.
"""

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...domain.integrations import ConnectorSpec
from ...ports.integrations import Connector, Unavailable
from ...settings import Settings

# Modules here that are no connector and must not be imported to find out: the folder watcher needs watchdog, an
# extra Lambda does not install. A module named `_x` is a helper too.
NOT_CONNECTORS = frozenset({"watch"})


@dataclass(frozen=True)
class Registered:
    """A connector module: its spec, and how the deployment makes it."""

    spec: ConnectorSpec
    make: Callable[[Settings], Connector]
    module: str


def found(package: str = __name__) -> list[Registered]:
    """Every connector module of `package`, by kind. A module that declares neither `SPEC` nor `connector` is a
    helper; one that declares one of them only, or a kind another module declared, stops the start."""
    registered: dict[str, Registered] = {}
    for info in sorted(pkgutil.iter_modules(importlib.import_module(package).__path__), key=lambda m: m.name):
        if info.name.startswith("_") or info.name in NOT_CONNECTORS:
            continue
        module = importlib.import_module(f"{package}.{info.name}")
        spec: Any = getattr(module, "SPEC", None)
        make: Any = getattr(module, "connector", None)
        if spec is None and make is None:
            continue
        if not isinstance(spec, ConnectorSpec) or not callable(make):
            raise TypeError(f"{module.__name__} is half a connector: it declares SPEC (a ConnectorSpec) and "
                            "connector(settings) together, or neither")
        if spec.kind in registered:
            raise TypeError(f"{module.__name__} and {registered[spec.kind].module} both declare the kind {spec.kind}")
        registered[spec.kind] = Registered(spec, make, module.__name__)
    return [registered[kind] for kind in sorted(registered)]


def connectors(settings: Settings, local: bool = True, package: str = __name__) -> dict[str, Connector]:
    """Every connector, made for this deployment, by kind. One that reads this machine (`spec.local`: a notes
    folder) is made only where `local` (the brain runs on someone's machine); elsewhere it is known but Unavailable,
    so connecting one is refused in words."""
    return {r.spec.kind: r.make(settings) if local or not r.spec.local else Unavailable(r.spec)
            for r in found(package)}
