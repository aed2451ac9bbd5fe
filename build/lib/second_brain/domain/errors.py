"""The one error module: every failure the core can report, by kind, never by message text."""


class BrainError(Exception):
    """Base of every error the application raises on purpose."""

    status = 500

    def __init__(self, message: str, **details: object) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class InvalidInput(BrainError):
    """The caller sent something the contract does not accept (permanent)."""

    status = 400


class NotFound(BrainError):
    """The thing asked for does not exist in the caller's readable scope."""

    status = 404


class Unauthorized(BrainError):
    """Missing, malformed or unknown credential."""

    status = 401

    def __init__(self, message: str = "Unauthorized", code: str = "invalid_token") -> None:
        super().__init__(message, code=code)


class Forbidden(BrainError):
    """The identity is valid but may not do this."""

    status = 403


class ConcurrencyConflict(BrainError):
    """Another writer appended to the stream first (transient: reload and retry)."""

    status = 409


class StoreUnavailable(BrainError):
    """A backing store could not be reached (transient)."""

    status = 503


class AlreadyExists(BrainError):
    """The thing to create is already there (permanent)."""

    status = 409


class SemanticUnavailable(StoreUnavailable):
    """No embedder is loaded: vectors cannot be made."""


class LanguageModelUnavailable(BrainError):
    """No language model is configured, or it failed, timed out or answered nonsense (callers fall back)."""

    status = 503
