"""Connectors of the external systems an integration mirrors."""
