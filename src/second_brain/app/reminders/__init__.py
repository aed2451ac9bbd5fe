"""Reminders: reading `when` values (`time_anchors.py`), finding time anchors and commitments in captures that
came without one (`extraction.py`), and pushing due reminders to people's devices (`push.py`)."""
