"""MCP tools for the memory graph (the twins of api/links.py's routes): link, unlink, connections."""

from typing import Annotated, Literal

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from ...app import operations as ops
from .render import as_json
from .tools import READS, Budget, Call, MemoryId, changes

SourceId = Annotated[str, Field(description="The id of the memory the link goes from.")]
TargetId = Annotated[str, Field(description="The id of the memory the link goes to.")]
LINK_TYPES = Literal["relates_to", "supersedes", "caused_by", "decided", "about_person", "part_of_project", "follows"]
LinkType = Annotated[LINK_TYPES | None, Field(description="What the source is to the target, read source first "
                                                          "(\"source supersedes target\", \"source was caused by "
                                                          "target\"); relates_to (no direction) when omitted. "
                                                          "decided and follows join two events: both memories "
                                                          "must carry the tag kind:episodic.")]
LinkTypeToRemove = Annotated[LINK_TYPES | None, Field(description="Only links of this type; omit to remove every "
                                                                  "link between the two.")]
LinkTypeShown = Annotated[LINK_TYPES | None, Field(description="Only links of this type; omit for every type.")]


def register(mcp: MCPServer, call: Call, budget: Budget) -> None:
    @mcp.tool(structured_output=False, annotations=changes(idempotent=True))
    async def link(source_id: SourceId, target_id: TargetId, type: LinkType = None) -> str:
        """Record a relationship between two memories, from source to target ("source supersedes target"); both in
        the same workspace. relates_to has no direction; the others do, and connections says which way each goes."""
        return as_json(await call(ops.link, source_id, target_id, type))

    @mcp.tool(structured_output=False, annotations=changes(destructive=True, idempotent=True))
    async def unlink(source_id: SourceId, target_id: TargetId, type: LinkTypeToRemove = None) -> str:
        """Remove the links between two memories, in either direction; omit type to remove all of them."""
        return as_json(await call(ops.unlink, source_id, target_id, type))

    @mcp.tool(structured_output=False, annotations=READS)
    async def connections(id: MemoryId, type: LinkTypeShown = None) -> str:
        """The memories linked to one memory (its 8 strongest neighbours), each with the relation, which way it
        goes (direction: outgoing, incoming, both ways) and a sentence saying it ("it supersedes this memory")."""
        return as_json(await call(ops.connections, id, type))
