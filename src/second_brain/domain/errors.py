"""The one error module: every failure the brain can report, by kind, never by message text.

Errors say what went wrong; which HTTP status or MCP error that becomes is decided at the edge
(entrypoints/api/errors.py).
"""


MAX_MESSAGE_CHARS = 400


class BrainError(Exception):
    """Base of every error the application raises on purpose."""

    def __init__(self, message: str, **details: object) -> None:
        # A message is one sentence: past this, what it quotes was a caller's value, cut (the sites quoting input
        # cut it to 40 characters themselves; this holds for any that does not).
        if len(message) > MAX_MESSAGE_CHARS:
            message = message[:MAX_MESSAGE_CHARS] + "…"
        super().__init__(message)
        self.message = message
        self.details = details


class InvalidInput(BrainError):
    """The caller sent something the contract does not accept (permanent)."""


class NotFound(BrainError):
    """The thing asked for does not exist in the caller's readable scope."""


class Unauthorized(BrainError):
    """Missing, malformed or unknown credential."""


    def __init__(self, message: str = "Unauthorized", code: str = "invalid_token") -> None:
        super().__init__(message, code=code)


class Forbidden(BrainError):
    """The identity is valid but may not do this."""


class ConcurrencyConflict(BrainError):
    """Another writer appended to the stream first (transient: reload and retry)."""


class StoreUnavailable(BrainError):
    """A backing store could not be reached (transient)."""


class AlreadyExists(BrainError):
    """The thing to create is already there (permanent)."""


class Outdated(BrainError):
    """What the request would restore or decide on changed since (permanent: look again, or edit it directly)."""


class NewerFormat(BrainError):
    """Stored data written by a newer build, in a format this one cannot read (permanent until upgraded): refused,
    never misread."""


class SemanticUnavailable(StoreUnavailable):
    """No embedder is loaded: vectors cannot be made."""


class LanguageModelUnavailable(BrainError):
    """No language model is configured, or it failed, timed out or answered nonsense (callers fall back)."""


class UnknownProject(NotFound):
    """A read named a project that is not in scope; the details list the ones that are."""


class TooLarge(BrainError):
    """A request body past the size limit."""


class ModelUnavailable(BrainError):
    """The local embedding model is missing or is not the file we expect (permanent until reinstalled)."""


class RerankerUnavailable(BrainError):
    """The reranker directory is missing a file or holds something that is not a cross-encoder."""


class ManagedMirror(BrainError):
    """A change through the API to a memory an integration owns: the next sync would overwrite it (409)."""
