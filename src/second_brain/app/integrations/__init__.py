"""Integrations: external systems mirrored into the brain."""
