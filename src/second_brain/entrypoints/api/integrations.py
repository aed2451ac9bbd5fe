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
# Each kind's settings. A secret (password, token; a calendar feed's url) is kept sealed outside the log and shown
# back as "(secret, kept sealed)", never as itself.
SETTING_OF: dict[str, dict[str, Any]] = {
    "path": SETTING | {"pattern": "^/", "description": "notes: the folder's absolute path (the owner only)"},
    "url": SETTING | {"pattern": "^https?://", "description": "calendar: the ICS feed's https:// address (a "
                      "secret); caldav: the server's, the principal's or one calendar's address"},
    "host": SETTING | {"description": "imap: the IMAP server's name, e.g. imap.gmail.com"},
    "port": SETTING | {"pattern": "^[0-9]{1,5}$", "description": "imap: its port, if not 993 (tls) or 143"},
    "security": {"type": "string", "enum": ["tls", "starttls", "none"],
                 "description": "imap: tls (the default) or starttls; none only for a test server on loopback"},
    "username": SETTING | {"description": "imap, caldav: the user name"},
    "password": SETTING | {"description": "imap, caldav: the password, or an app password (a secret)"},
    "mailbox": SETTING | {"description": "imap: the folder or label to mirror (INBOX if not given)"},
    "calendar": SETTING | {"description": "caldav: only the calendar of this name (all if not given)"},
    "token": SETTING | {"description": "notion: the internal integration's secret (a secret)"},
    "database": SETTING | {"description": "notion: databases' ids or links, separated by commas"},
    "page": SETTING | {"description": "notion: a page's id or link: it and the pages under it"}}
SETTINGS = {"type": "object", "properties": SETTING_OF,
            "description": "The connector's settings, its own only: notes takes path; imap host, username, password "
                           "(mailbox, security, port); calendar url; caldav url, username, password (calendar); "
                           "notion token and database or page"}
INTEGRATION_ID = {"type": "string", "pattern": "^[0-9a-f-]{36}$"}


def _kind(kind: str, required: list[str], *optional_names: str, **more: Any) -> dict[str, Any]:
    """One kind's body: its settings are its connector's own (any other is refused)."""
    names = [*required, *optional_names]
    return {"properties": {"kind": {"const": kind}, "settings": {
        "type": "object", "required": required, "properties": {n: SETTING_OF[n] for n in names},
        "additionalProperties": False, **more}}}


# Each kind with the settings its connector takes: what a connect is refused for lacking, or having besides.
BY_KIND = [
    _kind("notes", ["path"]),
    _kind("imap", ["host", "username", "password"], "port", "security", "mailbox"),
    _kind("calendar", ["url"]),
    _kind("caldav", ["url", "username", "password"], "calendar"),
    _kind("notion", ["token"], "database", "page", oneOf=[{"required": ["database"]}, {"required": ["page"]}]),
]


class ConnectBody(Body):
    model_config = requiring("kind", "settings", oneOf=BY_KIND)
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
