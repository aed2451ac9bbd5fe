"""REST routes for integrations: what is connected, the kinds there are to connect, connect, sync now, disconnect.

What each kind takes is its connector's own declaration (domain/integrations.ConnectorSpec, in its module under
adapters/integrations/): the published schema of POST /integrations is made from those specs when it is first asked
for (documented_kinds), and GET /integrations/kinds serves them to the dashboard, whose connect forms are made from
them."""

from collections.abc import Callable, Sequence
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Request
from pydantic import StrictBool, StrictStr

from ...app import operations as ops
from ...domain.integrations import ConnectorSpec, Field
from .body import Body, json_body
from .context import Ctx
from .openapi import documented, errors, requiring
from .schemas import LAYER, NOT_BLANK, optional, schema

router = APIRouter()

SETTING = {"type": "string", "maxLength": 2000}
# A connect's kind and settings as any connector takes them. Which kinds there are, and each kind's settings (which
# are required, which are secrets), are written in from the connectors' specs (document_kinds). A secret (password,
# token; a calendar feed's url) is kept sealed outside the log and shown back as "(secret, kept sealed)", never as
# itself.
KIND = {"type": "string"}
SETTINGS: dict[str, Any] = {"type": "object", "properties": {}}
INTEGRATION_ID = {"type": "string", "pattern": "^[0-9a-f-]{36}$"}


def setting_of(field: Field) -> dict[str, Any]:
    """One setting's schema: a string (one of its choices, or matching its pattern), in the API's words."""
    shape = ({"type": "string", "enum": [value for value, _ in field.choices]} if field.choices
             else SETTING | ({"pattern": field.pattern} if field.pattern else {}))
    return shape | {"description": (field.help or field.label) + (" (a secret)" if field.secret else "")}


def by_kind(spec: ConnectorSpec) -> dict[str, Any]:
    """One kind's body: its settings are its connector's own (any other is refused); what a connect is refused for
    lacking, or having besides."""
    settings: dict[str, Any] = {"type": "object", "properties": {f.name: setting_of(f) for f in spec.fields},
                                "additionalProperties": False}
    if required := [f.name for f in spec.fields if f.required]:
        settings["required"] = required
    if spec.one_of:
        settings["oneOf"] = [{"required": [name]} for name in spec.one_of]
    return {"properties": {"kind": {"const": spec.kind}, "settings": settings}}


def every_setting(specs: Sequence[ConnectorSpec]) -> dict[str, Any]:
    """Every kind's settings in one object (each kind's branch says which it takes): a setting several kinds take
    has the schema they share (any string, where they differ) and each kind's description."""
    declared: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for spec in specs:
        for field in spec.fields:
            declared.setdefault(field.name, []).append((spec.kind, setting_of(field)))
    found = {}
    for name, each in declared.items():
        shapes = [{k: v for k, v in shape.items() if k != "description"} for _, shape in each]
        shared = shapes[0] if all(shape == shapes[0] for shape in shapes) else dict(SETTING)
        found[name] = shared | {"description": "; ".join(f"{kind}: {shape['description']}" for kind, shape in each)}
    return found


def takes(spec: ConnectorSpec) -> str:
    """What a kind takes, in words: "imap host, username, password (mailbox, security, port)"."""
    required = [f.name for f in spec.fields if f.required]
    rest = [f.name for f in spec.fields if not f.required and f.name not in spec.one_of]
    either = f" and {' or '.join(spec.one_of)}" if spec.one_of else ""
    return f"{spec.kind} {', '.join(required)}{either}" + (f" ({', '.join(rest)})" if rest else "")


def document_kinds(schema: dict[str, Any], specs: Sequence[ConnectorSpec]) -> None:
    """POST /integrations' body in the published `schema` as these connectors declare it: its kinds, every setting,
    and one branch per kind (`oneOf`) with that kind's settings only."""
    body = schema["paths"]["/integrations"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    kind = body["properties"]["kind"]
    kind.pop("type", None)
    kind["enum"] = sorted(spec.kind for spec in specs)
    settings = body["properties"]["settings"]
    settings["properties"] = every_setting(specs)
    settings["description"] = f"The connector's settings, its own only: {'; '.join(takes(s) for s in specs)}"
    body["oneOf"] = [by_kind(spec) for spec in specs]


def documented_kinds(app: FastAPI, specs: Callable[[], Sequence[ConnectorSpec]]) -> Callable[[], dict[str, Any]]:
    """`app.openapi` with POST /integrations' body made from the connectors' specs, as the schema is first made
    (and kept: FastAPI makes it once)."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        fresh = app.openapi_schema is None
        made = generate()
        if fresh:
            document_kinds(made, specs())
        return made

    return openapi


class ConnectBody(Body):
    model_config = requiring("kind", "settings")  # and a branch per kind (document_kinds)
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


@router.get("/integrations/kinds", responses=errors())
def kinds(ctx: Ctx, request: Request) -> dict[str, Any]:
    return ops.integration_kinds(request.app.state.brain, ctx)


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
