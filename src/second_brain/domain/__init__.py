"""The domain: events, commands, the pure decisions and folds over them, and the rules they follow; no I/O.

Each module that defines events registers them where it defines them (`envelope.stored`). They are all imported
here, so that whichever part of the domain a process imports first, every stored type name reads back
(`envelope.from_data`) and every event shows as its row says (`shown`).
"""

# Imported for what importing them does: each registers its events, and how they show.
from . import conflicts, events, links, maintenance, oauth, patterns, projects, push, team  # noqa: F401
