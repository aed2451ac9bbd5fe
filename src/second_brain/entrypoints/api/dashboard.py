"""The dashboard: its shell at GET / (no token: the page asks for one and keeps it in localStorage) and its static
files at /dashboard/…, read from the package so the same files serve locally and on Lambda. Nothing is fetched
from elsewhere: the content security policy allows scripts and styles from this origin only."""

import hashlib
from functools import cache
from importlib.resources import files
from pathlib import PurePosixPath

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

router = APIRouter(include_in_schema=False)
# The files: dashboard/ in a checkout (setup.py maps it), in the wheel, and on Lambda the DashboardLayer, which only
# the API function has; found at the first request, so the MCP function imports this module without it.
PACKAGE = "second_brain.dashboard"
TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
         ".html": "text/html; charset=utf-8", ".svg": "image/svg+xml",
         ".webmanifest": "application/manifest+json"}
# connect-src: on AWS a large export redirects to, and a large import is PUT to, a presigned S3 URL.
POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
          "connect-src 'self' https://*.amazonaws.com; worker-src 'self'; base-uri 'none'; form-action 'self'; "
          "frame-ancestors 'none'")
HEADERS = {"Content-Security-Policy": POLICY, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}


@cache
def _read(path: str) -> tuple[bytes, str] | None:
    """A file's bytes and its ETag, or None for anything that is not a plain file under the dashboard folder (or
    for everything where the dashboard is not installed: the MCP function has no DashboardLayer)."""
    parts = PurePosixPath(path).parts
    if not parts or any(part in ("..", ".") or part.startswith(".") for part in parts):
        return None
    try:
        folder = files(PACKAGE)
    except ModuleNotFoundError:
        return None
    resource = folder.joinpath(*parts)
    if not resource.is_file():
        return None
    body = resource.read_bytes()
    return body, '"' + hashlib.sha256(body).hexdigest()[:20] + '"'


@router.get("/", response_class=HTMLResponse)
def shell(request: Request) -> Response:
    # Every reference in the page is relative to its folder. Behind API Gateway the page's public path is the
    # stage's (https://…/Prod/): opened as https://…/Prod, it is sent to the folder first.
    public = ((request.scope.get("aws.event") or {}).get("requestContext") or {}).get("path", "/")
    if not public.endswith("/"):
        return RedirectResponse(public + "/", status_code=308)
    found = _read("index.html")
    if found is None:  # not installed here (the MCP function): said in the envelope, not a blank page
        return Response(status_code=404, content=b'{"ok":false,"error":"The dashboard is not served here"}',
                        media_type="application/json")
    return HTMLResponse(found[0], headers={**HEADERS, "Cache-Control": "no-cache"})


@router.get("/dashboard/{path:path}")
def asset(path: str, request: Request) -> Response:
    kind = TYPES.get(PurePosixPath(path).suffix)
    found = _read(path) if kind and path != "index.html" else None
    if found is None:
        return Response(status_code=404, content=b'{"ok":false,"error":"Not found"}', media_type="application/json")
    body, etag = found
    # Modules import each other by plain path (one URL per module, so one instance of each), so the browser
    # revalidates every file on load: a 304 when unchanged, the new file right after an upgrade.
    headers = {**HEADERS, "Cache-Control": "no-cache", "ETag": etag}
    if path == "sw.js":  # the push worker's scope is the page's folder, not only dashboard/
        headers["Service-Worker-Allowed"] = "/"
    if request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers=headers)
    return Response(body, media_type=kind, headers=headers)
