"""POST /chat: server-sent events carrying the model's answer as it is written."""

import json
from collections.abc import Iterator
from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import StreamingResponse
from pydantic import StrictStr

from ...app import operations as ops
from ...domain.errors import LanguageModelUnavailable
from .body import Body, json_body
from .context import Ctx
from .openapi import documented, errors, requiring
from .schemas import TEXT, optional, schema

router = APIRouter()


class ChatBody(Body):
    model_config = requiring("query")
    query: Annotated[StrictStr | None, schema(TEXT)] = None
    memories: Annotated[StrictStr | None, optional({"type": "string"})] = None  # the context to answer from


ChatIn = Annotated[ChatBody, Depends(json_body(ChatBody))]


@router.post("/chat", response_class=StreamingResponse, openapi_extra=documented(ChatBody), responses={
    200: {"description": "Server-sent events: `data: {\"response\": ...}` pieces, then `data: [DONE]`",
          "content": {"text/event-stream": {"schema": {"type": "string"}}}},
    **errors(400, 413, 503)})
def chat(ctx: Ctx, body: ChatIn, request: Request) -> StreamingResponse:
    # Without a model this raises before the stream starts: a 503 in the envelope
    pieces = ops.chat(request.app.state.brain, ctx, body.query, body.memories)

    def events() -> Iterator[str]:
        try:
            for piece in pieces:
                yield f"data: {json.dumps({'response': piece})}\n\n"
        except LanguageModelUnavailable as exc:  # the stream has started: report in-band
            yield f"event: error\ndata: {json.dumps({'ok': False, 'error': exc.message})}\n\n"
        yield "data: [DONE]\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")
