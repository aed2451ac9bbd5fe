"""REST routes for backups: GET /export and POST /import, in the reference's version 3 format.

Where requests and responses are capped (6 MB on Lambda), a brain is given a blob store (S3): an export past
`export_inline_bytes` is written there and answered with a redirect (303) to a short-lived download URL, so
a client that follows redirects still gets the one file; and a backup too large to send is uploaded to a URL
from `POST /import/upload`, then imported page by page with `POST /import?upload=<its key>` and no body."""

import json
import re
import secrets
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import RedirectResponse
from starlette.concurrency import run_in_threadpool

from ...app import operations as ops
from ...app.transfer import ImportPayload
from ...domain.errors import InvalidInput, TooLarge
from .body import parse_object, read_body
from .context import Ctx
from .openapi import AS_OF, documented, errors, query
from .params import int_param, text_param
from .schemas import COUNT_RANGE

router = APIRouter()
uploads = APIRouter()  # mounted only where the brain has a blob store
MAX_IMPORT_BYTES = 512 * 1024 * 1024  # a whole backup is resent with every page
URL_SECONDS = 3600  # how long a download or upload URL works
UPLOAD_KEY = re.compile(r"imports/[0-9a-f]{32}\.json")


@router.get("/export", responses=errors(400), openapi_extra=documented(None, AS_OF))
def export(ctx: Ctx, request: Request) -> Any:
    """Every memory, edge and project you can read; with `as_of`, as they were then (and `as_of` in the answer)."""
    backup = ops.export(request.app.state.brain, ctx, text_param(request.query_params, "as_of"))
    blobs = request.app.state.blobs
    if blobs is None:
        return backup
    data = json.dumps(backup, ensure_ascii=False).encode()
    if carried_size(data) <= request.app.state.brain.settings.export_inline_bytes:
        return Response(data, media_type="application/json")
    key = f"exports/{secrets.token_hex(16)}.json"
    blobs.put(key, data)
    return RedirectResponse(blobs.download_url(key, URL_SECONDS), status_code=303)


def carried_size(body: bytes) -> int:
    """The bytes a response body takes inside Lambda's answer, which is what the 6 MB limit counts: the runtime
    writes the handler's answer as JSON, escaping every non-ASCII character (a CJK character's 3 bytes of UTF-8
    become 6) and every quote and backslash of the body. Issue 46 saw a 4.94 MB export of CJK notes, under the
    inline limit, become 7.87 MB there and API Gateway answer 502."""
    return len(json.dumps(body.decode()))


@uploads.post("/import/upload", responses=errors())
def import_upload(ctx: Ctx, request: Request) -> dict[str, Any]:
    """Where to POST a backup too large for one request (a form: `fields`, then the file as `file`), capped at
    `max_bytes` by S3 itself; then POST /import?upload=<upload> pages through it."""
    key = f"imports/{secrets.token_hex(16)}.json"
    most = request.app.state.brain.settings.import_upload_bytes
    form = request.app.state.blobs.upload_form(key, URL_SECONDS, most)
    return {"ok": True, "upload": key, "url": form["url"], "method": "POST", "fields": form["fields"],
            "file_field": "file", "content_type": "application/json", "max_bytes": most, "expires_in": URL_SECONDS}


PAGE = (query("limit", "Rows per call, clamped to 1-1000", "integer", minimum=1, maximum=1000, default=40),
        query("offset", "Entry offset to resume from", "integer", **COUNT_RANGE, default=0),
        query("edge_offset", "Edge offset to resume from", "integer", **COUNT_RANGE, default=0))
UPLOAD = query("upload", "Import the backup uploaded to this key (from POST /import/upload) instead of the body",
               pattern=f"^{UPLOAD_KEY.pattern}$")


@router.post("/import", responses=errors(400, 413, 503), openapi_extra=documented(ImportPayload, *PAGE))
async def import_backup(ctx: Ctx, request: Request) -> dict[str, Any]:
    params = request.query_params
    limit = int_param(params, "limit", 40, 1, 1000)
    offset = int_param(params, "offset", 0, 0)
    edge_offset = int_param(params, "edge_offset", 0, 0)
    # A whole backup comes with every page: it is handed to the operation, which reads it off the event loop (so
    # other requests go on answering) and lets it go before answering; nothing here keeps a reference to it.
    if "upload" in params:  # laid out in parts at its first page: a page reads only its own
        key, tag = await _uploaded(request, params["upload"])
        blobs = request.app.state.blobs
        answer = await run_in_threadpool(ops.import_page, request.app.state.brain, ctx,
                                         lambda: parse_object(bytearray(blobs.get(key))), limit, offset, edge_offset,
                                         (blobs, f"{key}.pages/{tag}"))
        if not answer["remaining_entries"] and not answer["remaining_edges"]:  # restored: the bucket's copy goes now
            await run_in_threadpool(blobs.discard, key)  # (the file and its parts; the bucket's rule is a day)
        return answer
    body = [await read_body(request, MAX_IMPORT_BYTES)]
    return await run_in_threadpool(ops.import_page, request.app.state.brain, ctx, lambda: parse_object(body.pop()),
                                   limit, offset, edge_offset, None, body[0])


# Where POST /import/upload is offered, POST /import takes `upload` too. The operation is listed again on that
# router only to say so: the schema keeps the last description of a path and method, requests reach the first.
uploads.add_api_route("/import", import_backup, methods=["POST"], operation_id="import_backup_or_upload",
                      responses=errors(400, 413, 503), openapi_extra=documented(ImportPayload, *PAGE, UPLOAD))


async def _uploaded(request: Request, key: str) -> tuple[str, str]:
    """The upload's key and its version, once it is known to hold a file of at most the cap."""
    blobs = request.app.state.blobs
    if blobs is None or not UPLOAD_KEY.fullmatch(key):
        raise InvalidInput("upload must be the key POST /import/upload returned")
    most = request.app.state.brain.settings.import_upload_bytes
    try:
        size, tag = await run_in_threadpool(blobs.stat, key)
    except KeyError:
        raise InvalidInput("nothing was uploaded to that key (or its hour has passed)") from None
    if size > most:  # put there some other way than the form
        raise TooLarge(f"the upload is larger than {most} bytes, the most an import reads")
    return key, tag
