"""Push gateways: Web Push (RFC 8030/8291/8292) over HTTP."""
