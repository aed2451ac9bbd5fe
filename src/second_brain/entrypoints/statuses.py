"""The documented HTTP status of each kind of failure, shared by the REST app (api/errors.py) and the MCP
endpoint's bearer gate (mcp/gate.py), neither of which imports the other."""

from ..domain import errors as e
from ..domain.errors import BrainError

# A subclass takes its nearest listed ancestor's.
STATUS: dict[type[BrainError], int] = {
    e.InvalidInput: 400, e.Unauthorized: 401, e.Forbidden: 403, e.NotFound: 404, e.ConcurrencyConflict: 409,
    e.ManagedMirror: 409, e.AlreadyExists: 409, e.Outdated: 409, e.TooLarge: 413, e.StoreUnavailable: 503,
    e.LanguageModelUnavailable: 503, e.ModelUnavailable: 503, e.RerankerUnavailable: 503, e.NewerFormat: 503,
}


def status_of(exc: BrainError) -> int:
    return next((STATUS[kind] for kind in type(exc).__mro__ if kind in STATUS), 500)
