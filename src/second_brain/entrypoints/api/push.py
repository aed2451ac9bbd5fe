"""REST routes for push reminders: the VAPID public key, device subscriptions, and sending now (admin)."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import StrictBool, StrictStr
from starlette.concurrency import run_in_threadpool

from ...app import operations as ops
from .body import Body, json_body
from .context import Ctx
from .openapi import documented, errors, requiring
from .schemas import AUTH, ENDPOINT, P256DH, TEXT, optional, schema

router = APIRouter()


class KeysBody(Body):
    model_config = requiring("p256dh", "auth")
    p256dh: Annotated[StrictStr | None, schema(P256DH)] = None
    auth: Annotated[StrictStr | None, schema(AUTH)] = None


class SubscriptionBody(Body):
    model_config = requiring("endpoint", "keys")
    endpoint: Annotated[StrictStr | None, schema(ENDPOINT)] = None
    keys: KeysBody | None = None


class SubscribeBody(Body):
    model_config = requiring("subscription")
    subscription: SubscriptionBody | None = None  # what the browser's PushSubscription.toJSON() gives
    content_free: Annotated[StrictBool | None, optional({"type": "boolean"})] = None


class UnsubscribeBody(Body):
    model_config = requiring("endpoint")
    endpoint: Annotated[StrictStr | None, schema(TEXT)] = None


SubscribeIn = Annotated[SubscribeBody, Depends(json_body(SubscribeBody))]
UnsubscribeIn = Annotated[UnsubscribeBody, Depends(json_body(UnsubscribeBody))]


@router.get("/push/vapid-public-key", responses=errors(409, 503))
def vapid_public_key(ctx: Ctx, request: Request) -> dict[str, Any]:
    return ops.push_public_key(request.app.state.brain, ctx)


@router.post("/push/subscribe", responses=errors(400, 409, 413, 503), openapi_extra=documented(SubscribeBody))
def subscribe(ctx: Ctx, body: SubscribeIn, request: Request) -> dict[str, Any]:
    subscription = body.subscription or SubscriptionBody()
    keys = subscription.keys or KeysBody()
    return ops.push_subscribe(request.app.state.brain, ctx, subscription.endpoint, keys.p256dh, keys.auth,
                              body.content_free)


@router.post("/push/unsubscribe", responses=errors(400, 409, 413, 503), openapi_extra=documented(UnsubscribeBody))
def unsubscribe(ctx: Ctx, body: UnsubscribeIn, request: Request) -> dict[str, Any]:
    return ops.push_unsubscribe(request.app.state.brain, ctx, body.endpoint)


@router.post("/push/run", responses=errors(403, 409, 503))
async def run(ctx: Ctx, request: Request) -> dict[str, Any]:
    return await run_in_threadpool(ops.push_run, request.app.state.brain, ctx)


@router.post("/push/test", responses=errors(403, 409, 503))
async def test(ctx: Ctx, request: Request) -> dict[str, Any]:
    return await run_in_threadpool(ops.push_test, request.app.state.brain, ctx)
