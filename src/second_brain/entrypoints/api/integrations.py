"""REST routes for integrations: what is connected, connect, sync now, disconnect."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import StrictBool, StrictStr

from ...app import operations as ops
from ...domain.integrations import KINDS
from .body import Body, json_body
from .context import Ctx
from .openapi import documented, errors, requiring
from .schemas import LAYER, NOT_BLANK, optional, schema

router = APIRouter()

KIND = {"enum": sorted(KINDS)}
SETTING = {"type": "string", "maxLength": 2000}
# Each kind's settings: a notes folder's absolute path on the machine the brain runs on; a calendar's ICS feed URL.
SETTINGS = {"type": "object", "properties": {
    "path": SETTING | {"pattern": "^/", "description": "notes: the folder's absolute path"},
    "url": SETTING | {"pattern": "^https?://", "description": "calendar: the ICS feed's https:// address"}},
    "additionalProperties": SETTING,
    "description": "The connector's settings: notes takes path, calendar takes url"}
INTEGRATION_ID = {"type": "string", "pattern": "^[0-9a-f-]{36}$"}


class ConnectBody(Body):
    model_config = requiring("kind", "settings")
    kind: Annotated[StrictStr | None, schema(KIND)] = None
    name: Annotated[StrictStr | None, optional({"type": "string", "maxLength": 100, "pattern": NOT_BLANK})] = None
    settings: Annotated[dict[str, Any] | None, schema(SETTINGS)] = None
    workspace: Annotated[StrictStr | None, optional(LAYER)] = None  # company: an admin's, into their first team


class IntegrationBody(Body):
    model_config = requiring("id")
    id: Annotated[StrictStr | None, schema(INTEGRATION_ID)] = None


class DisconnectBody(IntegrationBody):
    forget_mirrors: Annotated[StrictBool | None, optional({"type": "boolean"})] = None


ConnectIn = Annotated[ConnectBody, Depends(json_body(ConnectBody))]
IntegrationIn = Annotated[IntegrationBody, Depends(json_body(IntegrationBody))]
DisconnectIn = Annotated[DisconnectBody, Depends(json_body(DisconnectBody))]


@router.get("/integrations", responses=errors())
def list_integrations(ctx: Ctx, request: Request) -> dict[str, Any]:
    return ops.integrations(request.app.state.brain, ctx)


@router.post("/integrations", responses=errors(400, 403, 404, 413), openapi_extra=documented(ConnectBody))
def connect(ctx: Ctx, body: ConnectIn, request: Request) -> dict[str, Any]:
    return ops.connect_integration(request.app.state.brain, ctx, body.kind, body.name, body.settings,
                                   body.workspace)


@router.post("/integrations/sync", responses=errors(400, 403, 404, 413), openapi_extra=documented(IntegrationBody))
def sync(ctx: Ctx, body: IntegrationIn, request: Request) -> dict[str, Any]:
    return ops.sync_integration(request.app.state.brain, ctx, body.id)


@router.post("/integrations/disconnect", responses=errors(400, 403, 404, 413),
             openapi_extra=documented(DisconnectBody))
def disconnect(ctx: Ctx, body: DisconnectIn, request: Request) -> dict[str, Any]:
    return ops.disconnect_integration(request.app.state.brain, ctx, body.id, body.forget_mirrors)
