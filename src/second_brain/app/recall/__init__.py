"""Recall: a query read (`query.py`, `temporal.py`), keyword and vector candidates fused and ranked
(`keyword.py`, `ranking.py`, `rerank.py`), snippets (`snippets.py`), the pipeline that runs the stages in order
(`pipeline.py`, tuned by `config.py`), and answers a language model writes from the memories found (`chat.py`)."""
