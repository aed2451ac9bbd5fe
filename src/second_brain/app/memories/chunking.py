"""Split a memory into the passages that get their own vectors: the original text and each update block."""

from dataclasses import dataclass

CHUNK_MAX_CHARS = 1600
CHUNK_OVERLAP_CHARS = 200
UPDATE_MARK = "\n\n[Update "


@dataclass(frozen=True)
class Chunk:
    text: str
    is_update: bool


def chunk_memory(content: str, max_chars: int = CHUNK_MAX_CHARS, overlap: int = CHUNK_OVERLAP_CHARS) -> list[Chunk]:
    """The original part in windows of `max_chars` (overlapping), then every appended update on its own."""
    parts = content.split(UPDATE_MARK)
    chunks = [Chunk(text, False) for text in windows(parts[0], max_chars, overlap)]
    for block in parts[1:]:
        chunks.extend(Chunk(text, True) for text in windows("[Update " + block, max_chars, overlap))
    return [c for c in chunks if c.text.strip()] or [Chunk(content, False)]


def windows(text: str, max_chars: int, overlap: int) -> list[str]:
    """Windows ending at the last sentence or line end past the window's midpoint, else at the hard limit."""
    if len(text) <= max_chars:
        return [text]
    out: list[str] = []
    start = 0
    while start < len(text):
        end = min(start + max_chars, len(text))
        if end < len(text):
            cut = max(text.rfind(".", start, end), text.rfind("\n", start, end))
            if cut > start + max_chars // 2:
                end = cut + 1
        out.append(text[start:end])
        if end >= len(text):
            break
        start = max(end - overlap, start + 1)
    return out
