"""Insights: the brief of what the brain has been doing (`brief.py`), digests that roll a tag's low-signal
memories into one (`digest.py`), and answers to proposed patterns (`patterns.py`)."""
