"""The envelope an event travels in, the registry of stored type names, and how a stored payload becomes an event
again (upcast to its class's newest shape).

Every module that defines events registers them where it defines them (`@stored`), and imports only this module
for it, so no event module imports another. `second_brain.domain` imports each of them, so whichever part of the
domain a process imports first, the registry holds every event that exists.
"""

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from .errors import NewerFormat

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T")
Upcaster = Callable[[dict[str, Any]], dict[str, Any]]

REGISTRY: dict[str, type[Any]] = {}  # stored type name -> class
UPCASTERS: dict[tuple[str, int], Upcaster] = {}


def stored(cls: type[T]) -> type[T]:
    """Register an event class under its name, the type name the log stores it by; a second class of the same
    name, or one without a SCHEMA, is a mistake caught at import."""
    name = cls.__name__
    if name in REGISTRY:
        raise ValueError(f"two event types are stored as {name}: {REGISTRY[name].__module__} and {cls.__module__}")
    if not isinstance(getattr(cls, "SCHEMA", None), int):
        raise ValueError(f"{name} has no SCHEMA: the shape its payload is stored in")
    REGISTRY[name] = cls
    return cls


@dataclass(frozen=True)
class Erased:
    """What an erased event reads back as: its type survives, its content does not."""

    original_type: str
    SCHEMA: ClassVar[int] = 1


@dataclass(frozen=True)
class Envelope:
    """One event as stored: where it belongs, who caused it, when, and its global position."""

    stream_id: str
    version: int
    event: Any
    actor: str
    workspace: str
    request_id: str
    at: int  # unix milliseconds
    position: int = 0  # assigned by the store on append
    schema_version: int = 0  # the shape of `event`'s payload: its class's SCHEMA unless read from the log

    def __post_init__(self) -> None:
        if not self.schema_version:
            object.__setattr__(self, "schema_version", getattr(type(self.event), "SCHEMA", 1))

    @property
    def type(self) -> str:
        if isinstance(self.event, Erased):
            return self.event.original_type
        return type(self.event).__name__


def is_tombstone(event: object) -> bool:
    """True for events after which a stream's earlier content must be erased."""
    return bool(getattr(event, "TOMBSTONE", False))


def erased_by(event: object, version: int) -> Sequence[int]:
    """The earlier versions of its own stream whose content an event at `version` erases: every one for a
    tombstone, those it names for an event that `NAMES_ERASED` (another memory's words taken out of this stream's
    history); none for any other event."""
    if is_tombstone(event):
        return range(1, version)
    if getattr(event, "NAMES_ERASED", False):
        return tuple(v for v in event.versions if 0 < v < version)  # type: ignore[attr-defined]
    return ()


def to_data(event: "DataclassInstance") -> dict[str, Any]:
    """The JSON-ready payload of an event (tuples become lists)."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(event).items()}


def upcasts(type_name: str, schema: int) -> Callable[[Upcaster], Upcaster]:
    """Register how a payload of `type_name` stored with `schema` becomes one of `schema + 1`. An event's shape
    changes by raising its class's SCHEMA and registering the step from the one before: the log is never rewritten,
    every old event is read in the newest shape."""
    def register(upcaster: Upcaster) -> Upcaster:
        UPCASTERS[(type_name, schema)] = upcaster
        return upcaster
    return register


def from_data(type_name: str, data: dict[str, Any], erased: bool = False, schema_version: int = 1) -> object:
    """Rebuild an event from its stored type name, payload and the schema it was stored with, upcast to its
    class's current schema."""
    if erased:
        return Erased(type_name)
    cls = REGISTRY.get(type_name)
    if cls is None:
        raise NewerFormat(f"the log holds a {type_name} event, which this version of Second Brain does not know: "
                          f"it was written by a newer version; upgrade Second Brain to read it")
    if schema_version > cls.SCHEMA:
        raise NewerFormat(f"{type_name} of schema {schema_version} was written by a newer version of Second Brain "
                          f"(this one reads up to schema {cls.SCHEMA}); upgrade Second Brain to read it")
    for schema in range(schema_version, cls.SCHEMA):
        data = UPCASTERS[(type_name, schema)](data)
    fields = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}
    return cls(**fields)
