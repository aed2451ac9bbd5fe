"""Team and auth: who a bearer token stands for, the /team/* administration and the activity feed
(`service.py`), and OAuth for MCP clients over the log (`oauth.py`, with the `mcp` package's provider interface
in `oauth_provider.py`, imported only with the OAuth routes)."""
