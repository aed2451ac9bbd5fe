"""Memories and capture: the command side of a memory (capture, append, update, forget, status, tags,
`service.py`), what a new note means for the stored ones (`triage.py`), the vectors each memory gets
(`indexing.py`, `chunking.py`), projects (`projects.py`), and the read side that lists, counts and shows
memories to a caller (`queries.py`, `views.py`)."""
