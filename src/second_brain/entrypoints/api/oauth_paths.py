"""OAuth for MCP clients, where it is served: /mcp and the flow's paths. Their own module, below both oauth.py
(the bearer checks and the challenge, which name the paths) and oauth_routes.py (the routes, which answer at them),
so the routes can be imported lazily by oauth.py without importing it back."""

MCP_PATH = "/mcp"
CONSENT_PATH = "/oauth/consent"
AS_METADATA_PATH = "/.well-known/oauth-authorization-server"
REVOKE_PATH, REGISTER_PATH, TOKEN_PATH = "/revoke", "/register", "/token"
RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource"
PATHS = (AS_METADATA_PATH, RESOURCE_METADATA_PATH, "/authorize", TOKEN_PATH, REGISTER_PATH, REVOKE_PATH, CONSENT_PATH)
ROUTED = (*PATHS, RESOURCE_METADATA_PATH + MCP_PATH)  # every path the flow's routes answer (RFC 9728 §3.1's too)
