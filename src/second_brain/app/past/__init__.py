"""Time and the past, read from the log: answers as of a past moment (`as_of.py` folds the streams shown,
`recall.py` corrects the live indexes by what changed since), the brain-wide audit feed (`timeline.py`) and
each revision of a memory with its diff (`revisions.py`)."""
