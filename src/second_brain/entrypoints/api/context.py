"""What every route depends on: the caller's context, from the bearer token."""

from typing import Annotated, Any

from fastapi import Depends, Request, Security

from ...app.handling import Context
from ...domain.identity import Identity
from .auth import BEARER_SCHEME


def context(request: Request, _: Annotated[Any, Security(BEARER_SCHEME)] = None) -> Context:
    identity: Identity = request.app.state.auth(request)
    return Context(identity, request.state.request_id)


Ctx = Annotated[Context, Depends(context)]
