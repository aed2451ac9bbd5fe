"""The memory graph: links between memories made and removed over the pure edge rules (`links.py`), and the
nodes and edges a dashboard draws around a memory (`view.py`)."""
